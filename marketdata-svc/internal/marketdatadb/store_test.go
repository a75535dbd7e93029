package marketdatadb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func testConfig(url string) config.Config {
	return config.Config{DatabaseURL: url, StatementTimeout: 10 * time.Second,
		DBMaxOpenConns: 4, DBMaxIdleConns: 4, DBConnMaxLifetime: time.Minute, DBConnMaxIdleTime: time.Minute}
}

func openStore(t *testing.T) *marketdatadb.Store {
	t.Helper()
	return openStoreWith(t, testConfig(testenv.Postgres(t)))
}

// openStoreWith opens a store with cfg, closed when t ends.
func openStoreWith(t *testing.T, cfg config.Config) *marketdatadb.Store {
	t.Helper()
	s, err := marketdatadb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

var xnas = marketdata.Exchange{MIC: "XNAS", Name: "NASDAQ Stock Exchange", Acronym: "NASDAQ", CountryCode: "US",
	Country: "USA", City: "New York", Website: "www.nasdaq.com", Timezone: "America/New_York", Currency: "USD"}
var xnys = marketdata.Exchange{MIC: "XNYS", Name: "New York Stock Exchange", Acronym: "NYSE", CountryCode: "US",
	Country: "USA", City: "New York", Website: "www.nyse.com", Timezone: "America/New_York", Currency: "USD"}

// seed loads AAA (XNAS) and BBB (XNYS) on five trading days; BBB misses
// 2024-01-03. Closes are 100+day for AAA and 200+day for BBB.
func seed(t *testing.T, s *marketdatadb.Store) {
	t.Helper()
	var rows []marketdatadb.BarRow
	for i, d := range []string{"2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"} {
		for _, sym := range []string{"AAA", "BBB"} {
			if sym == "BBB" && d == "2024-01-03" {
				continue
			}
			base := 100.0
			if sym == "BBB" {
				base = 200
			}
			c := base + float64(i)
			rows = append(rows, marketdatadb.BarRow{Symbol: sym, Date: day(d), Open: c - 1, High: c + 1, Low: c - 2, Close: c, Volume: 1000})
		}
	}
	_, err := s.Apply(context.Background(), marketdatadb.Load{
		Exchanges: []marketdata.Exchange{xnas, xnys},
		Tickers: []marketdatadb.TickerRow{
			{Symbol: "AAA", Name: "Alpha Inc.", ExchangeMIC: "XNAS"},
			{Symbol: "BBB", Name: "Beta Corp.", ExchangeMIC: "XNYS"},
			{Symbol: "NOEX", Name: "No Exchange Ltd."},
		},
		Bars: marketdatadb.Bars(rows),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func keysOf(bars []marketdata.Bar) []string {
	var out []string
	for _, b := range bars {
		out = append(out, b.Date.Format("01-02")+" "+b.Symbol)
	}
	return out
}

func TestEODGroupsByDateInRequestOrderWithTotal(t *testing.T) {
	s := openStore(t)
	seed(t, s)
	ctx := context.Background()
	q := marketdata.EODQuery{Symbols: []string{"BBB", "ZZZ", "AAA"}, Sort: marketdata.SortDesc}
	all, err := s.EOD(ctx, q)
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
		p, err := s.EOD(ctx, q)
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
	p, err := s.EOD(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-02 AAA", "01-03 AAA", "01-04 BBB"}) {
		t.Fatalf("ascending page: %v", got)
	}
}

func TestEODRangesLatestAndExchange(t *testing.T) {
	s := openStore(t)
	seed(t, s)
	ctx := context.Background()
	syms := []string{"AAA", "BBB"}
	p, err := s.EOD(ctx, marketdata.EODQuery{Symbols: syms, DateFrom: day("2024-01-03"), DateTo: day("2024-01-04")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-04 AAA", "01-04 BBB", "01-03 AAA"}) || p.Total != 3 {
		t.Fatalf("range: %v total %d", got, p.Total)
	}
	p, err = s.EOD(ctx, marketdata.EODQuery{Symbols: syms, DateFrom: day("2024-01-03"), DateTo: day("2024-01-03")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-03 AAA"}) || p.Total != 1 {
		t.Fatalf("single date: %v total %d", got, p.Total)
	}
	p, err = s.EOD(ctx, marketdata.EODQuery{Symbols: syms, Latest: true, DateTo: day("2024-01-03")})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-03 AAA", "01-02 BBB"}) || p.Total != 2 {
		t.Fatalf("latest: %v total %d", got, p.Total)
	}
	p, err = s.EOD(ctx, marketdata.EODQuery{Symbols: syms, Exchange: "XNYS", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(p.Bars); !slices.Equal(got, []string{"01-08 BBB", "01-05 BBB"}) || p.Total != 4 {
		t.Fatalf("exchange filter: %v total %d", got, p.Total)
	}
	// Known symbols without bars in range: an empty page, not an error.
	p, err = s.EOD(ctx, marketdata.EODQuery{Symbols: []string{"NOEX", "AAA"}, DateFrom: day("2030-01-01")})
	if err != nil || len(p.Bars) != 0 || p.Total != 0 {
		t.Fatalf("empty range: %v, %v", p, err)
	}
	_, err = s.EOD(ctx, marketdata.EODQuery{Symbols: []string{"NOPE", "ZZZ"}})
	if !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("unknown symbols: %v", err)
	}
}

func TestTickersAndExchanges(t *testing.T) {
	s := openStore(t)
	seed(t, s)
	ctx := context.Background()
	p, err := s.Tickers(ctx, marketdata.TickerQuery{Symbols: []string{"NOEX", "XXX", "AAA"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tickers) != 2 || p.Total != 2 || p.Tickers[0].Symbol != "NOEX" || p.Tickers[0].Exchange != nil ||
		p.Tickers[1].Exchange == nil || p.Tickers[1].Exchange.MIC != "XNAS" || !p.Tickers[1].HasEOD || p.Tickers[0].HasEOD {
		t.Fatalf("by symbols: %+v", p)
	}
	if _, err := s.Tickers(ctx, marketdata.TickerQuery{Symbols: []string{"XXX"}}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("unknown symbols: %v", err)
	}
	p, err = s.Tickers(ctx, marketdata.TickerQuery{Search: "corp", Limit: 10})
	if err != nil || p.Total != 1 || p.Tickers[0].Symbol != "BBB" {
		t.Fatalf("search: %+v %v", p, err)
	}
	p, err = s.Tickers(ctx, marketdata.TickerQuery{Search: "%", Limit: 10})
	if err != nil || p.Total != 0 {
		t.Fatalf("LIKE metacharacters must match literally: %+v %v", p, err)
	}
	p, err = s.Tickers(ctx, marketdata.TickerQuery{Exchange: "XNAS"})
	if err != nil || p.Total != 1 || p.Tickers[0].Symbol != "AAA" {
		t.Fatalf("by exchange: %+v %v", p, err)
	}
	p, err = s.Tickers(ctx, marketdata.TickerQuery{Limit: 2, Offset: 1})
	if err != nil || p.Total != 3 || len(p.Tickers) != 2 || p.Tickers[0].Symbol != "BBB" {
		t.Fatalf("all, paged: %+v %v", p, err)
	}
	tk, err := s.Ticker(ctx, "BBB")
	if err != nil || tk.Name != "Beta Corp." || tk.Exchange.Acronym != "NYSE" {
		t.Fatalf("ticker: %+v %v", tk, err)
	}
	if _, err := s.Ticker(ctx, "NOPE"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("unknown ticker: %v", err)
	}
	ex, err := s.Exchange(ctx, "XNYS")
	if err != nil || ex != xnys {
		t.Fatalf("exchange: %+v %v", ex, err)
	}
	if _, err := s.Exchange(ctx, "XXXX"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("unknown exchange: %v", err)
	}
	ep, err := s.Exchanges(ctx, marketdata.ExchangeQuery{Search: "nasdaq"})
	if err != nil || ep.Total != 1 || ep.Exchanges[0].MIC != "XNAS" {
		t.Fatalf("exchanges search: %+v %v", ep, err)
	}
	ep, err = s.Exchanges(ctx, marketdata.ExchangeQuery{Limit: 1, Offset: 1})
	if err != nil || ep.Total != 2 || len(ep.Exchanges) != 1 || ep.Exchanges[0].MIC != "XNYS" {
		t.Fatalf("exchanges page: %+v %v", ep, err)
	}
}

// A split imported after the prices corrects every earlier adjusted value
// of the symbol in the same transaction, and a dividend compounds with it.
func TestNewSplitAndDividendReadjustEarlierBars(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	rows := []marketdatadb.BarRow{
		{Symbol: "AAPL", Date: day("2020-08-27"), Open: 500, High: 510, Low: 490, Close: 500, Volume: 2_000_000},
		{Symbol: "AAPL", Date: day("2020-08-28"), Open: 404, High: 408, Low: 396, Close: 400, Volume: 1_000_000},
		{Symbol: "AAPL", Date: day("2020-08-31"), Open: 127, High: 131, Low: 126, Close: 129, Volume: 9_000_000},
	}
	if _, err := s.Apply(ctx, marketdatadb.Load{Bars: marketdatadb.Bars(rows)}); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.DataVersion(ctx)
	res, err := s.Apply(ctx, marketdatadb.Load{Splits: []marketdata.Split{{Symbol: "AAPL", Date: day("2020-08-31"), Factor: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.BarsAdjusted != 3 || res.Version <= v1 { // two bars re-factored, the ex-date bar gets split_factor 4
		t.Fatalf("result %+v (version before %d)", res, v1)
	}
	p, err := s.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}})
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
	if _, err := s.Apply(ctx, marketdatadb.Load{Dividends: []marketdata.Dividend{{Symbol: "AAPL", Date: day("2020-08-28"), Amount: 4}}}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}})
	if got := p.Bars[2].AdjClose; got != 124 { // 500 × 0.992 / 4
		t.Fatalf("adj_close with dividend and split = %v, want 124", got)
	}
	if p.Bars[1].AdjClose != 100 || p.Bars[1].Dividend != 4 {
		t.Fatalf("ex-dividend bar: %+v", p.Bars[1])
	}
	d, err := s.Dividends(ctx, marketdata.ActionQuery{Symbols: []string{"AAPL"}})
	if err != nil || d.Total != 1 || d.Dividends[0].Amount != 4 {
		t.Fatalf("dividends: %+v %v", d, err)
	}
	sp, err := s.Splits(ctx, marketdata.ActionQuery{})
	if err != nil || sp.Total != 1 || sp.Splits[0].Factor != 4 || !sp.Splits[0].Date.Equal(day("2020-08-31")) {
		t.Fatalf("splits: %+v %v", sp, err)
	}
	if _, err := s.Splits(ctx, marketdata.ActionQuery{Symbols: []string{"NOPE"}}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Fatalf("splits of unknown symbols: %v", err)
	}
	// New prices before the split are adjusted on arrival.
	if _, err := s.Apply(ctx, marketdatadb.Load{Bars: marketdatadb.Bars([]marketdatadb.BarRow{
		{Symbol: "AAPL", Date: day("2020-08-26"), Open: 480, High: 480, Low: 480, Close: 480, Volume: 10},
	})}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.EOD(ctx, marketdata.EODQuery{Symbols: []string{"AAPL"}, Latest: false, DateTo: day("2020-08-26")})
	if got := p.Bars[0].AdjClose; got != 119.04 { // 480 × 0.992 / 4
		t.Fatalf("late-arriving bar adj_close = %v, want 119.04", got)
	}
}

func TestApplyIsIdempotentAndAllOrNothing(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	seed(t, s)
	v1, err := s.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s) // the same data again goes through the staged upsert
	if v2, _ := s.DataVersion(ctx); v2 != v1 {
		t.Fatalf("re-applying the same data bumped the version %d -> %d", v1, v2)
	}
	// One changed close: one row changed, version bumped.
	res, err := s.Apply(ctx, marketdatadb.Load{Bars: marketdatadb.Bars([]marketdatadb.BarRow{
		{Symbol: "AAA", Date: day("2024-01-02"), Open: 99, High: 101, Low: 98, Close: 100.5, Volume: 1000},
		{Symbol: "AAA", Date: day("2024-01-03"), Open: 100, High: 102, Low: 99, Close: 101, Volume: 1000},
	})})
	if err != nil || res.BarsChanged != 1 || res.Version != v1+1 {
		t.Fatalf("one change: %+v %v", res, err)
	}
	// A failing stream applies nothing, including the tickers of the load.
	bad := errors.New("f.csv:3: bad number")
	_, err = s.Apply(ctx, marketdatadb.Load{
		Tickers: []marketdatadb.TickerRow{{Symbol: "NEW", Name: "New"}},
		Bars: func() (marketdatadb.BarSource, error) {
			return &failingSource{rows: []marketdatadb.BarRow{{Symbol: "NEW", Date: day("2024-01-02"), Open: 1, High: 1, Low: 1, Close: 1, Volume: 1}}, err: bad}, nil
		},
	})
	if !errors.Is(err, bad) {
		t.Fatalf("failing source: %v", err)
	}
	if _, err := s.Ticker(ctx, "NEW"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("a failed load left its ticker behind: %v", err)
	}
	// A bar given twice is reported with its lines.
	_, err = s.Apply(ctx, marketdatadb.Load{Bars: marketdatadb.Bars([]marketdatadb.BarRow{
		{Symbol: "DUP", Date: day("2024-01-02"), Close: 1, Line: 2},
		{Symbol: "DUP", Date: day("2024-01-03"), Close: 1, Line: 3},
		{Symbol: "DUP", Date: day("2024-01-02"), Close: 2, Line: 4},
	})})
	var dup *marketdatadb.DuplicateBarsError
	if !errors.As(err, &dup) || len(dup.Duplicates) != 1 || !slices.Equal(dup.Duplicates[0].Lines, []int{2, 4}) {
		t.Fatalf("duplicates: %v", err)
	}
}

type failingSource struct {
	rows []marketdatadb.BarRow
	i    int
	err  error
}

func (f *failingSource) Next() bool               { f.i++; return f.i <= len(f.rows) }
func (f *failingSource) Bar() marketdatadb.BarRow { return f.rows[f.i-1] }
func (f *failingSource) Err() error               { return f.err }

func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	cfg := testConfig("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	_, err := marketdatadb.Open(context.Background(), cfg)
	if !errors.Is(err, marketdata.ErrUnavailable) {
		t.Fatalf("open on a closed port: %v, want ErrUnavailable", err)
	}
	if strings.Contains(fmt.Sprint(err), "password") {
		t.Fatal("error leaks connection details")
	}
}
