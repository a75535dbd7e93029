package cache

import (
	"context"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
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
	bar := marketdata.IntradayBar{Symbol: q.Symbols[0], Exchange: "XNAS", Date: time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC),
		Open: 1.5, High: 2.25, Low: 1, Close: 2.0000001, Volume: float64(n)}
	return marketdata.IntradayPage{Total: n, Open: s.open, Bars: []marketdata.IntradayBar{bar}}, nil
}

// clock is a time a test moves by hand, for every layer of a cache.
type clock struct{ now time.Time }

func (c *clock) set(s *Store) *Store {
	s.now = func() time.Time { return c.now }
	s.memory.now = s.now
	return s
}

// A page of a closed range lives as long as the data version and the TTL
// allow; a page reaching the open session is re-read once it is as old as
// its interval (at most IntradayOpenBound); a new data version is a miss.
// Each case runs on both backends and, with Redis, also asks a second
// replica (a second Store on the same Redis) after the same time: the
// bound holds for a page it finds in Redis too.
func TestIntradayCacheBound(t *testing.T) {
	redisURL := testenv.Redis(t)
	n := 0
	for _, backend := range []string{"local", "redis"} {
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
			{"open session, 5min interval within IntradayOpenBound", true, 5, IntradayOpenBound - time.Second, false},
			{"open session, 1hour interval bounded by IntradayOpenBound", true, 60, IntradayOpenBound, true},
		} {
			n++
			// Each case has its own symbol: the cases share the Redis database.
			sym := "AAA" + strconv.Itoa(n)
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				inner := &intradayStore{open: c.open}
				versions := at(1)
				clk := &clock{now: time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)}
				newCache := func() *Store {
					if backend == "local" {
						return clk.set(NewLocal(inner, versions, 16, Options{TTL: 5 * time.Minute, Registry: prometheus.NewRegistry()}))
					}
					return clk.set(newIntradayRedisCache(t, redisURL, inner, versions))
				}
				s := newCache()
				q := marketdata.IntradayQuery{Symbols: []string{sym}, Interval: c.interval, Limit: 100}
				first := mustIntraday(t, s, q)
				clk.now = clk.now.Add(c.after)
				if backend == "redis" {
					replica := newCache()
					calls := inner.calls.Load()
					got := mustIntraday(t, replica, q)
					if reread := inner.calls.Load() != calls; reread != c.reread {
						t.Errorf("second replica read the store: %v, want %v", reread, c.reread)
					}
					if !c.reread && !reflect.DeepEqual(got, first) {
						t.Errorf("second replica got %+v from Redis, want %+v", got, first)
					}
				}
				second := mustIntraday(t, s, q)
				if reread := second.Total != first.Total; reread != c.reread {
					t.Errorf("read again: %v, want %v", reread, c.reread)
				}
				versions.v.Store(2)
				third := mustIntraday(t, s, q)
				if third.Total == second.Total {
					t.Error("a new data version served the old page")
				}
			})
		}
	}
}

// A page reaching the open session expires in Redis within its bound, so
// Redis does not keep it past the bound even for a replica whose clock
// lags; a closed range's page lives for the TTL.
func TestIntradayRedisExpiry(t *testing.T) {
	redisURL := testenv.Redis(t)
	rdb, err := NewRedisClient(redisURL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	for _, c := range []struct {
		open     bool
		interval int
		max      time.Duration
	}{
		{true, 1, time.Minute},
		{true, 60, IntradayOpenBound},
		{false, 60, 5 * time.Minute},
	} {
		inner := &intradayStore{open: c.open}
		s := newIntradayRedisCache(t, redisURL, inner, at(1))
		q := marketdata.IntradayQuery{Symbols: []string{"TTL" + strconv.Itoa(c.interval) + strconv.FormatBool(c.open)}, Interval: c.interval, Limit: 10}
		mustIntraday(t, s, q)
		ttl, err := rdb.PTTL(context.Background(), entryKey(intradayPrefix, 1, q.CacheKey())).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > c.max {
			t.Errorf("open %v, interval %d: Redis keeps the page for %v, want (0, %v]", c.open, c.interval, ttl, c.max)
		}
	}
}

// A second replica finds the first one's page in Redis, and a data version
// bump makes it unreachable there too.
func TestIntradaySharedAndInvalidated(t *testing.T) {
	redisURL := testenv.Redis(t)
	inner := &intradayStore{}
	versions := at(1)
	a := newIntradayRedisCache(t, redisURL, inner, versions)
	b := newIntradayRedisCache(t, redisURL, inner, versions)
	q := marketdata.IntradayQuery{Symbols: []string{"GOOG"}, Interval: 60, Limit: 10}
	first := mustIntraday(t, a, q)
	if got := mustIntraday(t, b, q); !reflect.DeepEqual(got, first) || inner.calls.Load() != 1 {
		t.Fatalf("second replica: %+v after %d store reads, want %+v from Redis", got, inner.calls.Load(), first)
	}
	if hits := testutil.ToFloat64(b.metrics.hits); hits != 1 {
		t.Errorf("second replica counted %v hits, want 1", hits)
	}
	versions.v.Store(2)
	c := newIntradayRedisCache(t, redisURL, inner, versions)
	if got := mustIntraday(t, c, q); got.Total != 2 {
		t.Errorf("after a data version bump a replica got the page of read %d, want a new read", got.Total)
	}
	if got := mustIntraday(t, a, q); got.Total != 2 {
		t.Errorf("after a data version bump the first replica got the page of read %d, want the new one", got.Total)
	}
}

func newIntradayRedisCache(t *testing.T, url string, inner marketdata.Store, versions Versions) *Store {
	t.Helper()
	rdb, err := NewRedisClient(url, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return NewRedis(inner, rdb, versions, Options{TTL: 5 * time.Minute, Timeout: time.Second, Registry: prometheus.NewRegistry()})
}

func mustIntraday(t *testing.T, s *Store, q marketdata.IntradayQuery) marketdata.IntradayPage {
	t.Helper()
	p, err := s.Intraday(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
