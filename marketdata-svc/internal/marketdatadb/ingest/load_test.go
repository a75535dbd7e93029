package ingest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A split imported after the prices corrects every earlier adjusted value
// of the symbol in the same transaction, and a dividend compounds with it.
func TestNewSplitAndDividendReadjustEarlierBars(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	rows := []ingest.BarRow{
		{Symbol: "AAPL", Date: testenv.Day("2020-08-27"), Open: 500, High: 510, Low: 490, Close: 500, Volume: 2_000_000},
		{Symbol: "AAPL", Date: testenv.Day("2020-08-28"), Open: 404, High: 408, Low: 396, Close: 400, Volume: 1_000_000},
		{Symbol: "AAPL", Date: testenv.Day("2020-08-31"), Open: 127, High: 131, Low: 126, Close: 129, Volume: 9_000_000},
	}
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars(rows)}); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.DataVersion(ctx)
	res, err := s.Ingest.Apply(ctx, ingest.Load{Splits: []marketdata.Split{{Symbol: "AAPL", Date: testenv.Day("2020-08-31"), Factor: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.BarsAdjusted != 3 || res.Version <= v1 { // two bars re-factored, the ex-date bar gets split_factor 4
		t.Fatalf("result %+v (version before %d)", res, v1)
	}
	p, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}})
	if err != nil {
		t.Fatal(err)
	}
	b := p.Bars[1] // 2020-08-28
	if b.Close != 400 || b.AdjClose != 100 || b.AdjOpen != 101 || b.AdjHigh != 102 || b.AdjLow != 99 || b.AdjVolume != 4_000_000 {
		t.Fatalf("bar before the split: %+v", b)
	}
	if p.Bars[0].SplitFactor != 4 || p.Bars[0].AdjClose != 129 || p.Bars[0].AdjVolume != 9_000_000 {
		t.Fatalf("ex-date bar: %+v", p.Bars[0])
	}
	// $4 dividend ex 2020-08-28: previous close 500, so 08-27 × (1 − 4/500) × 1/4.
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Dividends: []marketdata.Dividend{{Symbol: "AAPL", Date: testenv.Day("2020-08-28"), Amount: 4}}}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}})
	if got := p.Bars[2].AdjClose; got != 124 { // 500 × 0.992 / 4
		t.Fatalf("adj_close with dividend and split = %v, want 124", got)
	}
	if p.Bars[1].AdjClose != 100 || p.Bars[1].Dividend != 4 {
		t.Fatalf("ex-dividend bar: %+v", p.Bars[1])
	}
	d, err := s.Reads.Dividends(ctx, marketdata.ActionQuery{Symbols: []string{"AAPL"}})
	if err != nil || d.Total != 1 || d.Dividends[0].Amount != 4 {
		t.Fatalf("dividends: %+v %v", d, err)
	}
	sp, err := s.Reads.Splits(ctx, marketdata.ActionQuery{})
	if err != nil || sp.Total != 1 || sp.Splits[0].Factor != 4 || !sp.Splits[0].Date.Equal(testenv.Day("2020-08-31")) {
		t.Fatalf("splits: %+v %v", sp, err)
	}
	if _, err := s.Reads.Splits(ctx, marketdata.ActionQuery{Symbols: []string{"NOPE"}}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("splits of unknown symbols: %v", err)
	}
	// New prices before the split are adjusted on arrival.
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars([]ingest.BarRow{
		{Symbol: "AAPL", Date: testenv.Day("2020-08-26"), Open: 480, High: 480, Low: 480, Close: 480, Volume: 10},
	})}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}, Latest: false, DateTo: testenv.Day("2020-08-26")})
	if got := p.Bars[0].AdjClose; got != 119.04 { // 480 × 0.992 / 4
		t.Fatalf("late-arriving bar adj_close = %v, want 119.04", got)
	}
}

func TestApplyIsIdempotentAndAllOrNothing(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	testenv.Seed(t, s)
	v1, err := s.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Seed(t, s) // the same data again goes through the staged upsert
	if v2, _ := s.DataVersion(ctx); v2 != v1 {
		t.Fatalf("re-applying the same data bumped the version %d -> %d", v1, v2)
	}
	// One changed close: one row changed, version bumped.
	res, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars([]ingest.BarRow{
		{Symbol: "AAA", Date: testenv.Day("2024-01-02"), Open: 99, High: 101, Low: 98, Close: 100.5, Volume: 1000},
		{Symbol: "AAA", Date: testenv.Day("2024-01-03"), Open: 100, High: 102, Low: 99, Close: 101, Volume: 1000},
	})})
	if err != nil || res.BarsChanged != 1 || res.Version != v1+1 {
		t.Fatalf("one change: %+v %v", res, err)
	}
	// A failing stream applies nothing, including the tickers of the load.
	bad := errors.New("f.csv:3: bad number")
	_, err = s.Ingest.Apply(ctx, ingest.Load{
		Tickers: []ingest.TickerRow{{Symbol: "NEW", Name: "New"}},
		Bars: func() (ingest.BarSource, error) {
			return &failingSource{rows: []ingest.BarRow{{Symbol: "NEW", Date: testenv.Day("2024-01-02"), Open: 1, High: 1, Low: 1, Close: 1, Volume: 1}}, err: bad}, nil
		},
	})
	if !errors.Is(err, bad) {
		t.Fatalf("failing source: %v", err)
	}
	if _, err := s.Reads.Ticker(ctx, "NEW"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("a failed load left its ticker behind: %v", err)
	}
	// A bar given twice is reported with its lines.
	_, err = s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars([]ingest.BarRow{
		{Symbol: "DUP", Date: testenv.Day("2024-01-02"), Close: 1, Line: 2},
		{Symbol: "DUP", Date: testenv.Day("2024-01-03"), Close: 1, Line: 3},
		{Symbol: "DUP", Date: testenv.Day("2024-01-02"), Close: 2, Line: 4},
	})})
	var dup *ingest.DuplicateBarsError
	if !errors.As(err, &dup) || len(dup.Duplicates) != 1 || !slices.Equal(dup.Duplicates[0].Lines, []int{2, 4}) {
		t.Fatalf("duplicates: %v", err)
	}
}

type failingSource struct {
	rows []ingest.BarRow
	i    int
	err  error
}

func (f *failingSource) Next() bool         { f.i++; return f.i <= len(f.rows) }
func (f *failingSource) Bar() ingest.BarRow { return f.rows[f.i-1] }
func (f *failingSource) Err() error         { return f.err }
