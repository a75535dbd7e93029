package reads_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func keysOf(bars []marketdata.Bar) []string {
	var out []string
	for _, b := range bars {
		out = append(out, b.Date.Format("01-02")+" "+b.Symbol)
	}
	return out
}

func TestEODGroupsByDateInRequestOrderWithTotal(t *testing.T) {
	s := testenv.Store(t)
	testenv.Seed(t, s)
	ctx := context.Background()
	q := marketdata.EODQuery{Symbols: []string{"BBB", "ZZZ", "AAA"}, Sort: marketdata.SortDesc}
	all, err := s.Reads.EOD(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"01-08 BBB", "01-08 AAA", "01-05 BBB", "01-05 AAA", "01-04 BBB", "01-04 AAA", "01-03 AAA", "01-02 BBB", "01-02 AAA"}
	if got := keysOf(all.Bars); !slices.Equal(got, want) || all.Total != 9 {
		t.Fatalf("unbounded: %v total %d, want %v total 9", got, all.Total, want)
	}
	b := all.Bars[1]
	if b.Name != "Alpha Inc." || b.Exchange != "XNAS" || b.ExchangeCode != "NASDAQ" || b.AssetType != "Stock" ||
		b.PriceCurrency != "USD" || b.Close != 104 || b.AdjClose != 104 || b.SplitFactor != 1 || b.AdjVolume != 1000 {
		t.Fatalf("bar fields: %+v", b)
	}
	// Pages of 4 join up without gaps or repeats, and each reports the total.
	var joined []string
	for off := 0; off < 12; off += 4 {
		q.Limit, q.Offset = 4, off
		p, err := s.Reads.EOD(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 9 {
			t.Fatalf("offset %d: total %d", off, p.Total)
		}
		joined = append(joined, keysOf(p.Bars)...)
	}
	if !slices.Equal(joined, want) {
		t.Fatalf("pages joined: %v", joined)
	}
	q.Sort, q.Limit, q.Offset = marketdata.SortAsc, 3, 1
	p, err := s.Reads.EOD(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-02 AAA", "01-03 AAA", "01-04 BBB"}) {
		t.Fatalf("ascending page: %v", got)
	}
}

func TestEODRangesLatestAndExchange(t *testing.T) {
	s := testenv.Store(t)
	testenv.Seed(t, s)
	ctx := context.Background()
	syms := []string{"AAA", "BBB"}
	p, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: syms, DateFrom: testenv.Day("2024-01-03"), DateTo: testenv.Day("2024-01-04")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-04 AAA", "01-04 BBB", "01-03 AAA"}) || p.Total != 3 {
		t.Fatalf("range: %v total %d", got, p.Total)
	}
	p, err = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: syms, DateFrom: testenv.Day("2024-01-03"), DateTo: testenv.Day("2024-01-03")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-03 AAA"}) || p.Total != 1 {
		t.Fatalf("single date: %v total %d", got, p.Total)
	}
	p, err = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: syms, Latest: true, DateTo: testenv.Day("2024-01-03")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-03 AAA", "01-02 BBB"}) || p.Total != 2 {
		t.Fatalf("latest: %v total %d", got, p.Total)
	}
	p, err = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: syms, Exchange: "XNYS", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-08 BBB", "01-05 BBB"}) || p.Total != 4 {
		t.Fatalf("exchange filter: %v total %d", got, p.Total)
	}
	// Known symbols without bars in range: an empty page, not an error.
	p, err = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"NOEX", "AAA"}, DateFrom: testenv.Day("2030-01-01")})
	if err != nil || len(p.Bars) != 0 || p.Total != 0 {
		t.Fatalf("empty range: %v, %v", p, err)
	}
	_, err = s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"NOPE", "ZZZ"}})
	if !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("unknown symbols: %v", err)
	}
}

func TestTickersAndExchanges(t *testing.T) {
	s := testenv.Store(t)
	testenv.Seed(t, s)
	ctx := context.Background()
	p, err := s.Reads.Tickers(ctx, marketdata.TickerQuery{Symbols: []string{"NOEX", "XXX", "AAA"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tickers) != 2 || p.Total != 2 || p.Tickers[0].Symbol != "NOEX" || p.Tickers[0].Exchange != nil ||
		p.Tickers[1].Exchange == nil || p.Tickers[1].Exchange.MIC != "XNAS" || !p.Tickers[1].HasEOD || p.Tickers[0].HasEOD {
		t.Fatalf("by symbols: %+v", p)
	}
	if _, err := s.Reads.Tickers(ctx, marketdata.TickerQuery{Symbols: []string{"XXX"}}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("unknown symbols: %v", err)
	}
	p, err = s.Reads.Tickers(ctx, marketdata.TickerQuery{Search: "corp", Limit: 10})
	if err != nil || p.Total != 1 || p.Tickers[0].Symbol != "BBB" {
		t.Fatalf("search: %+v %v", p, err)
	}
	p, err = s.Reads.Tickers(ctx, marketdata.TickerQuery{Search: "%", Limit: 10})
	if err != nil || p.Total != 0 {
		t.Fatalf("LIKE metacharacters must match literally: %+v %v", p, err)
	}
	p, err = s.Reads.Tickers(ctx, marketdata.TickerQuery{Exchange: "XNAS"})
	if err != nil || p.Total != 1 || p.Tickers[0].Symbol != "AAA" {
		t.Fatalf("by exchange: %+v %v", p, err)
	}
	p, err = s.Reads.Tickers(ctx, marketdata.TickerQuery{Limit: 2, Offset: 1})
	if err != nil || p.Total != 3 || len(p.Tickers) != 2 || p.Tickers[0].Symbol != "BBB" {
		t.Fatalf("all, paged: %+v %v", p, err)
	}
	tk, err := s.Reads.Ticker(ctx, "BBB")
	if err != nil || tk.Name != "Beta Corp." || tk.Exchange.Acronym != "NYSE" {
		t.Fatalf("ticker: %+v %v", tk, err)
	}
	if _, err := s.Reads.Ticker(ctx, "NOPE"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("unknown ticker: %v", err)
	}
	ex, err := s.Reads.Exchange(ctx, "XNYS")
	if err != nil || ex != testenv.XNYS() {
		t.Fatalf("exchange: %+v %v", ex, err)
	}
	if _, err := s.Reads.Exchange(ctx, "XXXX"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("unknown exchange: %v", err)
	}
	ep, err := s.Reads.Exchanges(ctx, marketdata.ExchangeQuery{Search: "nasdaq"})
	if err != nil || ep.Total != 1 || ep.Exchanges[0].MIC != "XNAS" {
		t.Fatalf("exchanges search: %+v %v", ep, err)
	}
	ep, err = s.Reads.Exchanges(ctx, marketdata.ExchangeQuery{Limit: 1, Offset: 1})
	if err != nil || ep.Total != 2 || len(ep.Exchanges) != 1 || ep.Exchanges[0].MIC != "XNYS" {
		t.Fatalf("exchanges page: %+v %v", ep, err)
	}
}
