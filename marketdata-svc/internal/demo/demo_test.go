package demo_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The acceptance query, against the store: GOOG and GSPC.INDX up
// to 2008-10-14, four records: two dates, both symbols each, and a total
// over every matching record of both symbols.
func TestDemoLoadsIdempotentlyAndAnswersTheAcceptanceQuery(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	res, err := demo.Load(ctx, s.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	if res.BarsRead != 1047+65+5105 || !res.Changed() {
		t.Fatalf("first load: %+v", res)
	}
	if res, err = demo.Load(ctx, s.Ingest); err != nil || res.Changed() {
		t.Fatalf("second load changed data: %+v %v", res, err)
	}
	to, _ := time.Parse(time.DateOnly, "2008-10-14")
	p, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"GOOG", "GSPC.INDX"}, DateTo: to, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range p.Bars {
		got = append(got, b.Date.Format(time.DateOnly)+" "+b.Symbol)
	}
	want := []string{"2008-10-14 GOOG", "2008-10-14 GSPC.INDX", "2008-10-13 GOOG", "2008-10-13 GSPC.INDX"}
	if !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if p.Total != 1047+2209 { // every GOOG bar, and the S&P 500 from 2000-01-03 to 2008-10-14
		t.Fatalf("total %d, want %d", p.Total, 1047+2209)
	}
	g, sp := p.Bars[0], p.Bars[1]
	if g.Close != 362.71 || g.Name != "Alphabet Inc. Class C" || g.Exchange != "XNAS" || g.ExchangeCode != "NASDAQ" || g.AssetType != "Stock" {
		t.Fatalf("GOOG record: %+v", g)
	}
	if sp.Close != 998.01001 || sp.Exchange != "INDX" || sp.AssetType != "Index" || sp.PriceCurrency != "USD" {
		t.Fatalf("S&P 500 record: %+v", sp)
	}
	splits, err := s.Reads.Splits(ctx, marketdata.ActionQuery{Symbols: []string{"AAPL"}})
	if err != nil || splits.Total != 1 || splits.Splits[0].Factor != 4 {
		t.Fatalf("AAPL splits: %+v %v", splits, err)
	}
	ex, err := s.Reads.Exchanges(ctx, marketdata.ExchangeQuery{})
	if err != nil || ex.Total != int64(len(demo.Exchanges)) {
		t.Fatalf("exchanges: %d %v", ex.Total, err)
	}
}
