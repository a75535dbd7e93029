package cache

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// intradayStore answers intraday pages that say how many times it was
// asked; open says whether their range reaches the trading session.
type intradayStore struct {
	countingStore
	calls atomic.Int64
	open  bool
}

func (s *intradayStore) Intraday(_ context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	n := s.calls.Add(1)
	return marketdata.IntradayPage{Total: n, Open: s.open}, nil
}

// A page of a closed range lives as long as the data version and the TTL
// allow; a page reaching the open session is re-read once it is as old as
// its interval (at most IntradayOpenBound); a new data version is a miss.
func TestIntradayCacheBound(t *testing.T) {
	for _, c := range []struct {
		name     string
		open     bool
		interval int
		after    time.Duration
		reread   bool
	}{
		{"closed range, long after", false, 60, 4 * time.Minute, false},
		{"open session, within its 1min interval", true, 1, 59 * time.Second, false},
		{"open session, past its 1min interval", true, 1, time.Minute, true},
		{"open session, 1hour interval bounded by IntradayOpenBound", true, 60, IntradayOpenBound, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &intradayStore{open: c.open}
			versions := at(1)
			s := NewLocal(inner, versions, 16, Options{TTL: 5 * time.Minute, Registry: prometheus.NewRegistry()})
			now := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)
			s.now = func() time.Time { return now }
			s.memory.now = s.now
			q := marketdata.IntradayQuery{Symbols: []string{"AAA"}, Interval: c.interval, Limit: 100}
			first, err := s.Intraday(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(c.after)
			second, _ := s.Intraday(context.Background(), q)
			if reread := second.Total != first.Total; reread != c.reread {
				t.Errorf("read again: %v, want %v", reread, c.reread)
			}
			versions.v.Store(2)
			third, _ := s.Intraday(context.Background(), q)
			if third.Total == second.Total {
				t.Error("a new data version served the old page")
			}
		})
	}
}
