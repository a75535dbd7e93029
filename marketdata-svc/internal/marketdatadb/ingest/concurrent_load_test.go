package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// adjCloses returns symbol's adj_close by date.
func adjCloses(t *testing.T, s *testenv.Stores, symbol string) map[string]float64 {
	t.Helper()
	p, err := s.Reads.EOD(context.Background(), marketdata.EODQuery{Symbols: []string{symbol}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, b := range p.Bars {
		out[b.Date.Format(time.DateOnly)] = b.AdjClose
	}
	return out
}

// TestConcurrentLoadsOfOneSymbol reproduces an outside audit's finding: import A adds a split
// while import B adds older bars of the same symbol. Each recomputed the
// factors from a snapshot without the other's rows, so B's bars kept factor
// 1 for good (adj_close 100 on 2009-12-31, 50 on 2010-01-04) and a re-import
// said "no changes". The class is every pair of writers of one symbol's
// derived state: split, dividend and bar loads in any order. The test makes
// the interleaving certain: a third session holds the data version row, so
// both loads do all their work before either can commit.
func TestConcurrentLoadsOfOneSymbol(t *testing.T) {
	base := []ingest.BarRow{
		{Symbol: "GOOG", Date: testenv.Day("2010-01-04"), Open: 50, High: 50, Low: 50, Close: 50, Volume: 100},
		{Symbol: "GOOG", Date: testenv.Day("2010-01-05"), Open: 52, High: 52, Low: 52, Close: 52, Volume: 100},
	}
	older := []ingest.BarRow{{Symbol: "GOOG", Date: testenv.Day("2009-12-31"), Open: 100, High: 100, Low: 100, Close: 100, Volume: 100}}
	split := ingest.Load{Splits: []marketdata.Split{{Symbol: "GOOG", Date: testenv.Day("2010-01-04"), Factor: 2}}}
	dividend := ingest.Load{Dividends: []marketdata.Dividend{{Symbol: "GOOG", Date: testenv.Day("2010-01-05"), Amount: 1}}}
	bars := ingest.Load{Bars: ingest.Bars(older)}

	cases := map[string][]ingest.Load{
		"split and older bars":         {split, bars},
		"older bars and split":         {bars, split},
		"split, dividend and old bars": {split, dividend, bars},
		"dividend and split":           {dividend, split},
	}
	for name, loads := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			// The sequential result is the reference.
			ref := testenv.Store(t)
			for _, l := range append([]ingest.Load{{Bars: ingest.Bars(base)}}, loads...) {
				if _, err := ref.Ingest.Apply(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			want := adjCloses(t, ref, "GOOG")

			url := testenv.Postgres(t)
			s := testenv.StoreAt(t, url)
			if _, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars(base)}); err != nil {
				t.Fatal(err)
			}
			holder, tx := testenv.HoldLocks(t, url, "LOCK TABLE data_version IN SHARE MODE")
			var wg sync.WaitGroup
			errs := make([]error, len(loads))
			for i, l := range loads {
				wg.Go(func() { _, errs[i] = s.Ingest.Apply(ctx, l) })
			}
			// Every load waits on a lock: the data version row, or another
			// load of the same symbol.
			for deadline := time.Now().Add(30 * time.Second); ; {
				var waiting int
				if err := holder.QueryRow(`SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting >= len(loads) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("only %d of %d loads reached a lock", waiting, len(loads))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("load %d: %v", i, err)
				}
			}
			got := adjCloses(t, s, "GOOG")
			for date, w := range want {
				if got[date] != w {
					t.Errorf("adj_close on %s = %v after concurrent loads, %v after sequential ones", date, got[date], w)
				}
			}
		})
	}
}

// TestReimportRepairsFactors: a re-import must leave a symbol's factors as
// its full state implies, not report "no changes" over wrong ones (as it did
// after the race above). A factor is spoiled by hand, then the same split is
// applied again.
func TestReimportRepairsFactors(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	rows := []ingest.BarRow{
		{Symbol: "GOOG", Date: testenv.Day("2009-12-31"), Open: 100, High: 100, Low: 100, Close: 100, Volume: 100},
		{Symbol: "GOOG", Date: testenv.Day("2010-01-04"), Open: 50, High: 50, Low: 50, Close: 50, Volume: 100},
	}
	split := ingest.Load{Splits: []marketdata.Split{{Symbol: "GOOG", Date: testenv.Day("2010-01-04"), Factor: 2}}}
	for _, l := range []ingest.Load{{Bars: ingest.Bars(rows)}, split} {
		if _, err := s.Ingest.Apply(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().Exec("UPDATE eod_bars SET price_factor = 1, volume_factor = 1 WHERE symbol = 'GOOG'"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []ingest.Load{split, {Bars: ingest.Bars(rows)}} {
		res, err := s.Ingest.Apply(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if got := adjCloses(t, s, "GOOG")["2009-12-31"]; got != 50 {
			t.Fatalf("after re-applying: adj_close %v on 2009-12-31, want 50 (result %+v)", got, res)
		}
		// Spoil again for the next load of the same class.
		if _, err := s.DB().Exec("UPDATE eod_bars SET price_factor = 1 WHERE symbol = 'GOOG'"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDayRecomputesOnlyItsActions: a day of bars recomputes the factors
// of the symbols with an action that day, not of every symbol with one in
// its history, whose factors the day cannot change. A spoiled factor
// shows which symbols were read again: GOOG's (an old split, nothing
// today) stays spoiled, MSFT's (a split today) is recomputed.
func TestDayRecomputesOnlyItsActions(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	bar := func(sym, day string, px float64) ingest.BarRow {
		return ingest.BarRow{Symbol: sym, Date: testenv.Day(day), Open: px, High: px, Low: px, Close: px, Volume: 100}
	}
	history := ingest.Load{
		Bars:   ingest.Bars([]ingest.BarRow{bar("GOOG", "2009-12-31", 100), bar("GOOG", "2010-01-04", 50), bar("MSFT", "2010-01-04", 30)}),
		Splits: []marketdata.Split{{Symbol: "GOOG", Date: testenv.Day("2010-01-04"), Factor: 2}},
	}
	if _, err := s.Ingest.Apply(ctx, history); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec("UPDATE eod_bars SET price_factor = 0.25 WHERE symbol = 'GOOG' AND date = '2009-12-31'"); err != nil {
		t.Fatal(err)
	}
	day := ingest.Load{
		Bars:   ingest.Bars([]ingest.BarRow{bar("GOOG", "2010-01-05", 51), bar("MSFT", "2010-01-05", 15)}),
		Splits: []marketdata.Split{{Symbol: "MSFT", Date: testenv.Day("2010-01-05"), Factor: 2}},
	}
	res, err := s.Ingest.Apply(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	if got := adjCloses(t, s, "GOOG")["2009-12-31"]; got != 25 {
		t.Errorf("GOOG's 2009-12-31 adj_close %v: a day after all its actions recomputed it (want the spoiled 25)", got)
	}
	if got := adjCloses(t, s, "MSFT")["2010-01-04"]; got != 15 {
		t.Errorf("MSFT's 2010-01-04 adj_close %v, want 15 after its 2:1 split (result %+v)", got, res)
	}
}
