package demo_test

import (
	"context"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// For every demo symbol and day with minutes, the 24hour bar aggregated by
// the store equals the day's EOD bar: open, high, low, close and volume.
func TestDemoIntradayAgreesWithEOD(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	if _, err := demo.Load(ctx, s.Ingest); err != nil {
		t.Fatal(err)
	}
	for _, sym := range demo.IntradaySeries {
		tk, err := s.Reads.Ticker(ctx, sym)
		if err != nil || !tk.HasIntraday {
			t.Errorf("%s has_intraday: %+v %v", sym, tk, err)
		}
		days, err := demo.IntradayDaysOf(sym)
		if err != nil || len(days) != demo.IntradayDays {
			t.Fatalf("%s: %d days %v", sym, len(days), err)
		}
		p, err := s.Reads.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{sym}, Interval: marketdata.DayMinutes, Sort: marketdata.SortAsc, Limit: 100})
		if err != nil || len(p.Bars) != len(days) {
			t.Fatalf("%s: %d 24hour bars, want %d (%v)", sym, len(p.Bars), len(days), err)
		}
		for i, d := range days {
			eod, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{sym}, DateFrom: d.Date, DateTo: d.Date, Limit: 1})
			if err != nil || len(eod.Bars) != 1 {
				t.Fatalf("%s %s: eod %v", sym, d.Date, err)
			}
			e, b := eod.Bars[0], p.Bars[i]
			if b.Open != e.Open || b.High != e.High || b.Low != e.Low || b.Close != e.Close || b.Volume != e.Volume {
				t.Errorf("%s %s: 24hour %+v, eod %+v", sym, d.Date.Format("2006-01-02"), b, e)
			}
		}
	}
}
