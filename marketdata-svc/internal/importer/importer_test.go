package importer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const dataDir = "../demo/data"

func day(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

func bar(t *testing.T, s *testenv.Stores, sym, date string) marketdata.Bar {
	t.Helper()
	p, err := s.Reads.EOD(context.Background(), marketdata.EODQuery{Symbols: []string{sym}, DateFrom: day(date), DateTo: day(date)})
	if err != nil || len(p.Bars) != 1 {
		t.Fatalf("%s %s: %+v %v", sym, date, p, err)
	}
	return p.Bars[0]
}

// The three real files, in three layouts, reproduce their known values
// exactly, and importing them again changes nothing.
func TestImportRealFiles(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	files := []struct {
		file, symbol, layout string
		rows                 int64
	}{
		{"goog-2004-2008.csv", "GOOG", importer.LayoutYahoo, 1047},
		// The provenance README counts 64 and 5,104 rows; the files hold 65
		// and 5,105 (their last line has no newline).
		{"msft-2003.csv", "MSFT", importer.LayoutYahooLegacy, 65},
		{"sp500-2000-2020.csv", "GSPC.INDX", importer.LayoutYahooLower, 5105},
	}
	for _, f := range files {
		res, err := importer.ImportFile(ctx, s.Ingest, filepath.Join(dataDir, f.file), importer.Options{Symbol: f.symbol})
		if err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		if res.Kind != importer.KindPrices || res.Layout != f.layout || res.Rows != f.rows || res.Load.BarsChanged != f.rows || !res.Load.Changed() {
			t.Fatalf("%s: %+v", f.file, res)
		}
	}
	g := bar(t, s, "GOOG", "2008-10-14")
	if g.Open != 393.53 || g.High != 394.50 || g.Low != 357.00 || g.Close != 362.71 || g.Volume != 7784800 || g.AdjClose != 362.71 {
		t.Fatalf("GOOG 2008-10-14: %+v", g)
	}
	m := bar(t, s, "MSFT", "2003-09-19") // first line of a newest-first file with 19-Sep-03 dates
	if m.Open != 29.76 || m.High != 29.97 || m.Low != 29.52 || m.Close != 29.96 || m.Volume != 92433800 {
		t.Fatalf("MSFT 2003-09-19: %+v", m)
	}
	if m := bar(t, s, "MSFT", "2003-06-19"); m.Close != 26.07 { // last line, no trailing newline
		t.Fatalf("MSFT 2003-06-19: %+v", m)
	}
	sp := bar(t, s, "GSPC.INDX", "2008-10-14")
	if sp.Open != 1009.969971 || sp.Close != 998.01001 || sp.Volume != 8161990000 {
		t.Fatalf("S&P 500 2008-10-14: %+v", sp)
	}
	if sp := bar(t, s, "GSPC.INDX", "2020-04-17"); sp.Close != 2874.560059 { // last line, no trailing newline
		t.Fatalf("S&P 500 2020-04-17: %+v", sp)
	}
	v, _ := s.DataVersion(ctx)
	res, err := importer.ImportFile(ctx, s.Ingest, filepath.Join(dataDir, "goog-2004-2008.csv"), importer.Options{Symbol: "GOOG"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Load.Changed() || res.Load.BarsChanged != 0 || res.Rows != 1047 {
		t.Fatalf("re-import changed data: %+v", res)
	}
	if v2, _ := s.DataVersion(ctx); v2 != v {
		t.Fatalf("re-import bumped the data version %d -> %d", v, v2)
	}
}

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A file with bad rows applies nothing and names every bad row.
func TestBadRowsFailTheWholeFile(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	p := writeFile(t, "bad.csv", `Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,10,11,9,10.5,10.5,100
2024-01-03,10,eleven,9,10.5,10.5,100
2024-13-01,10,11,9,10.5,10.5,100
2024-01-05,10,11,9,10.5,10.5
2024-01-08,10,8,9,10.5,10.5,100
2024-01-09,10,11,9,10.5,10.5,-5
2024-01-10,null,null,null,null,null,null
`)
	_, err := importer.ImportFile(ctx, s.Ingest, p, importer.Options{Symbol: "BAD"})
	var rows *importer.RowErrors
	if !errors.As(err, &rows) {
		t.Fatalf("want row errors, got %v", err)
	}
	want := []string{
		p + `:3: invalid high "eleven"`,
		p + `:4: invalid date "2024-13-01"`,
		p + `:5: expected 7 fields, got 6`,
		p + `:6: high 8 is below low 9`,
		p + `:7: negative volume -5`,
	}
	if strings.Join(rows.Rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("errors:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if _, err := s.Reads.Ticker(ctx, "BAD"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Fatalf("failed file applied its ticker: %v", err)
	}
	// A good file of the same symbol with a null row (Yahoo) imports.
	good := writeFile(t, "good.csv", "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.5,100\n2024-01-10,null,null,null,null,null,null\n")
	res, err := importer.ImportFile(ctx, s.Ingest, good, importer.Options{Symbol: "bad"})
	if err != nil || res.Rows != 1 || res.Skipped != 1 {
		t.Fatalf("good file: %+v %v", res, err)
	}
	// A row repeated in one file is named with both lines.
	dup := writeFile(t, "dup.csv", "Date,Open,High,Low,Close,Volume\n2024-01-03,1,1,1,1,1\n2024-01-04,1,1,1,1,1\n2024-01-03,2,2,2,2,2\n")
	_, err = importer.ImportFile(ctx, s.Ingest, dup, importer.Options{Symbol: "BAD"})
	if err == nil || !strings.Contains(err.Error(), "duplicate bar BAD 2024-01-03 on lines [2 4]") {
		t.Fatalf("duplicate rows: %v", err)
	}
	if p, _ := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{"BAD"}}); p.Total != 1 {
		t.Fatalf("failed file applied rows: total %d", p.Total)
	}
}

// Tiingo's per-row divCash and splitFactor become corporate actions, and
// the Stooq layouts import too; metadata files set exchanges and tickers.
func TestOtherLayoutsAndMetadata(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	ex := writeFile(t, "exchanges.csv", "mic,name,acronym,country_code,country,city,website,timezone,currency\nXNAS,NASDAQ Stock Exchange,NASDAQ,US,USA,New York,www.nasdaq.com,America/New_York,USD\n")
	tk := writeFile(t, "tickers.csv", "symbol,name,exchange,asset_type,price_currency\nAAPL,Apple Inc,XNAS,Stock,USD\n")
	for _, f := range []string{ex, tk} {
		if _, err := importer.ImportFile(ctx, s.Ingest, f, importer.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	tiingo := writeFile(t, "aapl.csv", `date,close,high,low,open,volume,adjClose,adjHigh,adjLow,adjOpen,adjVolume,divCash,splitFactor
2020-08-27T00:00:00.000Z,500.04,509.94,495.33,508.57,38888096,125.01,127.485,123.8325,127.1425,155552384,0.0,1.0
2020-08-28T00:00:00.000Z,499.23,505.77,498.31,504.05,46907479,124.8075,126.4425,124.5775,126.0125,187629916,0.0,1.0
2020-08-31T00:00:00.000Z,129.04,131.0,126.0,127.58,225702700,129.04,131.0,126.0,127.58,225702700,0.0,4.0
`)
	res, err := importer.ImportFile(ctx, s.Ingest, tiingo, importer.Options{Symbol: "AAPL"})
	if err != nil || res.Layout != importer.LayoutTiingo || res.Load.ActionsChanged != 1 {
		t.Fatalf("tiingo: %+v %v", res, err)
	}
	b := bar(t, s, "AAPL", "2020-08-28")
	if b.Close != 499.23 || b.AdjClose != 124.8075 || b.AdjVolume != 187629916 || b.Name != "Apple Inc" || b.Exchange != "XNAS" {
		t.Fatalf("AAPL before its 4:1 split: %+v", b)
	}
	stooq := writeFile(t, "ibm.csv", "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>\nIBM.US,D,20240102,000000,161.5,163.3,160.9,163.1,4130000,0\n")
	res, err = importer.ImportFile(ctx, s.Ingest, stooq, importer.Options{Exchange: "XNAS"})
	if err != nil || res.Layout != importer.LayoutStooqBulk {
		t.Fatalf("stooq bulk: %+v %v", res, err)
	}
	if b := bar(t, s, "IBM", "2024-01-02"); b.Close != 163.1 || b.Exchange != "XNAS" {
		t.Fatalf("IBM: %+v", b)
	}
	plain := writeFile(t, "x.csv", "Date,Open,High,Low,Close,Volume\n2024-01-02,1,2,0.5,1.5,10\n")
	if res, err := importer.ImportFile(ctx, s.Ingest, plain, importer.Options{Symbol: "X"}); err != nil || res.Layout != importer.LayoutStooq {
		t.Fatalf("stooq: %+v %v", res, err)
	}
	splits := writeFile(t, "splits.csv", "Date,Stock Splits\n2024-01-03,2:1\n")
	if _, err := importer.ImportFile(ctx, s.Ingest, splits, importer.Options{Symbol: "X"}); err != nil {
		t.Fatal(err)
	}
	if b := bar(t, s, "X", "2024-01-02"); b.AdjClose != 0.75 || b.AdjVolume != 20 {
		t.Fatalf("X after a 2:1 split: %+v", b)
	}
	divs := writeFile(t, "divs.csv", "symbol,date,amount\nX,2024-01-03,0.15\n")
	if res, err := importer.ImportFile(ctx, s.Ingest, divs, importer.Options{}); err != nil || res.Kind != importer.KindDividends {
		t.Fatalf("dividends: %+v %v", res, err)
	}
	if b := bar(t, s, "X", "2024-01-02"); b.AdjClose != 0.675 { // 1.5 × (1 − 0.15/1.5) / 2
		t.Fatalf("X after a dividend: %+v", b)
	}
	if _, err := importer.ImportFile(ctx, s.Ingest, plain, importer.Options{}); err == nil || !strings.Contains(err.Error(), "no symbol") {
		t.Fatalf("no symbol: %v", err)
	}
}
