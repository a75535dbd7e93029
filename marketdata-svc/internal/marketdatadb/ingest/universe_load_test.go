package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// universeBars is one bar of each of n symbols on day.
type universeBars struct {
	n, i int
	day  time.Time
}

func (u *universeBars) Next() bool { u.i++; return u.i <= u.n }
func (u *universeBars) Err() error { return nil }
func (u *universeBars) Bar() ingest.BarRow {
	return ingest.BarRow{Symbol: fmt.Sprintf("U%05d", u.i), Date: u.day, Open: 10, High: 11, Low: 9, Close: 10.5, Volume: 100}
}

// TestLoadOfAWholeUniverse: a load of one day of 30,000 symbols (an
// exchange's day from a provider's bulk endpoint, or an import of such a
// file) took one advisory lock per symbol in its transaction and failed
// with "out of shared memory" past the server's lock table
// (max_locks_per_transaction × connections, 6,400 by default); then the
// next day of the same symbols, which goes through the staged upsert.
func TestLoadOfAWholeUniverse(t *testing.T) {
	s := testenv.Store(t)
	const n = 30_000
	for _, day := range []string{"2024-03-07", "2024-03-08"} {
		d, _ := time.Parse(time.DateOnly, day)
		res, err := s.Ingest.Apply(context.Background(), ingest.Load{
			Bars: func() (ingest.BarSource, error) { return &universeBars{n: n, day: d}, nil },
		})
		if err != nil {
			t.Fatalf("load of %s: %v", day, err)
		}
		if res.BarsChanged != n {
			t.Fatalf("load of %s changed %d bars, want %d", day, res.BarsChanged, n)
		}
	}
}
