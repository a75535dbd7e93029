package ingest_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// Each load that bumps the data version records, in its transaction, what
// it changed in the EOD bars served, whichever way its bars reach the
// table: per symbol the earliest date changed, every date for a split,
// a dividend or a new symbol, nothing (changes unknown) for a load of
// tickers or of intraday bars.
func TestLoadsRecordTheirChanges(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	testenv.Seed(t, s) // exchanges and tickers: changes unknown
	day := testenv.Day
	every := time.Time{}
	// bar is shaped as Seed's bars are, so that a seeded bar given again
	// is unchanged.
	bar := func(sym, d string, c float64) ingest.BarRow {
		return ingest.BarRow{Symbol: sym, Date: day(d), Open: c - 1, High: c + 1, Low: c - 2, Close: c, Volume: 1000}
	}
	version := func() int64 {
		t.Helper()
		v, err := s.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	apply := func(l ingest.Load) int64 {
		t.Helper()
		res, err := s.Ingest.Apply(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Changed() {
			t.Fatalf("load %+v changed nothing", l)
		}
		return res.Version
	}
	changes := func(from, to int64) marketdata.EODChanges {
		t.Helper()
		c, err := s.EODChanges(ctx, from, to, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	expect := func(what string, got, want marketdata.EODChanges) {
		t.Helper()
		if (got == nil) != (want == nil) || !maps.Equal(got, want) {
			t.Errorf("%s: changes %v, want %v", what, got, want)
		}
	}
	seeded := version()
	expect("seed (exchanges, tickers)", changes(seeded-1, seeded), nil)

	// A new day, copied straight into the table.
	newDay := apply(ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("AAA", "2024-01-09", 105), bar("BBB", "2024-01-09", 205)})})
	expect("new day", changes(newDay-1, newDay), marketdata.EODChanges{"AAA": day("2024-01-09"), "BBB": day("2024-01-09")})

	// A restated bar among unchanged ones, merged through the staging
	// table: only the restated one counts.
	restated := apply(ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("AAA", "2024-01-03", 101), bar("AAA", "2024-01-04", 99), bar("BBB", "2024-01-09", 205)})})
	expect("restated bar", changes(restated-1, restated), marketdata.EODChanges{"AAA": day("2024-01-04")})

	// A split changes every earlier adjusted value of its symbol.
	split := apply(ingest.Load{Splits: []marketdata.Split{{Symbol: "BBB", Date: day("2024-01-08"), Factor: 2}}})
	expect("split", changes(split-1, split), marketdata.EODChanges{"BBB": every})
	expect("merged over three versions", changes(newDay-1, split), marketdata.EODChanges{"AAA": day("2024-01-04"), "BBB": every})

	// A dividend on 01-05 of AAA, then a restated close of the day before
	// it, which moves the dividend's factor for every bar before 01-05:
	// the factors recomputed reach further back than the bar restated.
	apply(ingest.Load{Dividends: []marketdata.Dividend{{Symbol: "AAA", Date: day("2024-01-05"), Amount: 1}}})
	refactored := apply(ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("AAA", "2024-01-04", 98)})})
	expect("restated close before a dividend", changes(refactored-1, refactored), marketdata.EODChanges{"AAA": day("2024-01-02")})

	// A symbol unknown until now was left out of the pages that named it.
	newSymbol := apply(ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("NEWCO", "2024-01-09", 10)})})
	expect("new symbol", changes(newSymbol-1, newSymbol), marketdata.EODChanges{"NEWCO": every})

	// Re-applying a load changes nothing and records nothing.
	if res, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("NEWCO", "2024-01-09", 10)})}); err != nil || res.Changed() {
		t.Fatalf("re-applied load: %+v, %v", res, err)
	}

	// A ticker renamed changes what every bar of it repeats: unknown, and
	// so is any range over it.
	renamed := apply(ingest.Load{Tickers: []ingest.TickerRow{{Symbol: "AAA", Name: "Alpha Renamed", ExchangeMIC: "XNAS"}}})
	expect("ticker renamed", changes(renamed-1, renamed), nil)
	expect("range over a ticker renamed", changes(newSymbol-1, renamed), nil)

	// Intraday bars describe no EOD change.
	if _, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(testenv.Minutes("AAA", "2024-01-09 09:30", 3))}); err != nil {
		t.Fatal(err)
	}
	intraday := version()
	expect("intraday load", changes(intraday-1, intraday), nil)

	// A version the database has not reached, and more symbols than asked
	// for, are unknown too.
	expect("version not reached", changes(newDay-1, intraday+1), nil)
	if c, err := s.EODChanges(ctx, newDay-1, newDay, 1); err != nil || c != nil {
		t.Errorf("changes over the limit: %v, %v", c, err)
	}

	// Old versions are pruned by the loads that record newer ones.
	for i := range ingest.ChangesKept {
		apply(ingest.Load{Bars: ingest.Bars([]ingest.BarRow{bar("AAA", "2024-01-10", 110+float64(i))})})
	}
	expect("pruned version", changes(newDay-1, newDay), nil)
	last := version()
	expect("kept version", changes(last-1, last), marketdata.EODChanges{"AAA": day("2024-01-10")})
}
