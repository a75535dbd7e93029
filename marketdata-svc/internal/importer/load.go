package importer

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Load is the one entry point of every daily-data write, a file's import
// and a provider's sync alike: the load is applied in one transaction
// (ingest.Store.Apply: symbol locks, adjustment factors recomputed,
// data version bumped), and every bar it streams must pass CheckBar, so
// that no caller stores a bar the importer would refuse. The caller
// publishes the new version (LoadResult.Version) once it is committed.
func Load(ctx context.Context, store Applier, l ingest.Load) (ingest.LoadResult, error) {
	if l.Bars != nil {
		open := l.Bars
		l.Bars = func() (ingest.BarSource, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			return &checkedBars{BarSource: src}, nil
		}
	}
	return store.Apply(ctx, l)
}

// CheckBar refuses a bar no reader should be served: a price or volume
// that is not a finite number or is negative, or a high below its low.
func CheckBar(b ingest.BarRow) error {
	names := [...]string{"open", "high", "low", "close", "volume"}
	for i, v := range [...]float64{b.Open, b.High, b.Low, b.Close, b.Volume} {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("invalid %s %v", names[i], v)
		case v < 0:
			return fmt.Errorf("negative %s %v", names[i], v)
		}
	}
	if b.High < b.Low {
		return fmt.Errorf("high %v is below low %v", b.High, b.Low)
	}
	return nil
}

// checkedBars fails the stream, and so the whole load, at the first bar
// CheckBar refuses: callers filter and report bad rows before, so one
// reaching here is a defect, never stored.
type checkedBars struct {
	ingest.BarSource
	err error
}

func (c *checkedBars) Next() bool {
	if c.err != nil || !c.BarSource.Next() {
		return false
	}
	b := c.BarSource.Bar()
	if err := CheckBar(b); err != nil {
		c.err = fmt.Errorf("bar %s %s: %w", b.Symbol, b.Date.Format("2006-01-02"), err)
		return false
	}
	return true
}

func (c *checkedBars) Err() error { return cmp.Or(c.err, c.BarSource.Err()) }
