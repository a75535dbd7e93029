package importer

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Price layouts recognised from the header.
const (
	LayoutYahoo       = "yahoo"        // Date,Open,High,Low,Close,Adj Close,Volume
	LayoutYahooLegacy = "yahoo-legacy" // Date,Open,High,Low,Close,Volume,Adj. Close* with 19-Sep-03 dates
	LayoutYahooLower  = "yahoo-lower"  // date,open,high,low,close,adjclose,volume (vega-datasets)
	LayoutStooq       = "stooq"        // Date,Open,High,Low,Close[,Volume]
	LayoutStooqBulk   = "stooq-bulk"   // <TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>
	LayoutTiingo      = "tiingo"       // date,close,high,low,open,volume,adjClose,...,divCash,splitFactor
)

type priceColumns struct {
	date, open, high, low, close, volume, symbol, per, dividend, split int
	width                                                              int // fields a row needs
}

// DetectPriceLayout names the layout of a price file header and maps its
// columns. Adjusted columns are ignored: adjusted values are computed from
// the splits and dividends the store knows.
func DetectPriceLayout(header []string) (string, priceColumns, error) {
	c := headerColumns(header)
	pc := priceColumns{
		date:     c.find("date", "timestamp", "day"),
		open:     c.find("open"),
		high:     c.find("high"),
		low:      c.find("low"),
		close:    c.find("close"),
		volume:   c.find("volume", "vol"),
		symbol:   c.find("symbol", "ticker"),
		per:      c.find("per"),
		dividend: c.find("divcash", "dividend", "dividends"),
		split:    c.find("splitfactor", "split", "stocksplits"),
	}
	for name, i := range map[string]int{"date": pc.date, "open": pc.open, "high": pc.high, "low": pc.low, "close": pc.close} {
		if i < 0 {
			return "", pc, fmt.Errorf("not a daily price file: no %s column in header %q", name, strings.Join(header, ","))
		}
	}
	for _, i := range []int{pc.date, pc.open, pc.high, pc.low, pc.close, pc.volume, pc.symbol, pc.per, pc.dividend, pc.split} {
		pc.width = max(pc.width, i+1)
	}
	raw := strings.Join(header, ",")
	layout := LayoutStooq
	switch {
	case strings.Contains(raw, "<"):
		layout = LayoutStooqBulk
	case c.find("divcash", "splitfactor") >= 0:
		layout = LayoutTiingo
	case strings.Contains(raw, "Adj. Close"):
		layout = LayoutYahooLegacy
	case strings.Contains(raw, "Adj Close"):
		layout = LayoutYahoo
	case c.find("adjclose") >= 0:
		layout = LayoutYahooLower
	}
	return layout, pc, nil
}

// PriceFile streams the bars of one price CSV file; it implements
// ingest.BarSource. Bad rows are collected and reported by Err once
// the file is read, as *RowErrors.
type PriceFile struct {
	rowFile
	layout  string
	cols    priceColumns
	dates   dateParser
	cur     ingest.BarRow
	skipped int
}

// OpenPrices opens a price file and reads its header. symbol overrides any
// symbol column; without either the file is refused.
func OpenPrices(path, symbol string) (*PriceFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := NewPrices(path, f, symbol)
	if err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

// NewPrices reads price rows from r, named name in error messages.
func NewPrices(name string, r io.Reader, symbol string) (*PriceFile, error) {
	rf, header, err := openRowFile(name, r)
	if err != nil {
		return nil, err
	}
	layout, cols, err := DetectPriceLayout(header)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	if err := rf.keyRows(rowKey{symbol: normalizeSymbol(symbol), symbolCol: cols.symbol,
		periodCol: cols.per, period: "D", periodName: "daily (D)"}); err != nil {
		return nil, err
	}
	rf.width = cols.width
	return &PriceFile{rowFile: rf, layout: layout, cols: cols}, nil
}

// Layout names the detected layout.
func (p *PriceFile) Layout() string { return p.layout }

// Skipped counts rows without prices (Yahoo's "null" rows), which are not
// errors.
func (p *PriceFile) Skipped() int { return p.skipped }

// Next reads up to the next good row.
func (p *PriceFile) Next() bool { return p.next(p.parse) }

func (p *PriceFile) parse(rec []string, line int) bool {
	c := p.cols
	if isNull(rec[c.open]) && isNull(rec[c.high]) && isNull(rec[c.low]) && isNull(rec[c.close]) {
		p.skipped++
		return false
	}
	b := ingest.BarRow{Line: line}
	var ok bool
	if b.Symbol, ok = p.rowSymbol(rec, line); !ok {
		return false
	}
	var err error
	if b.Date, err = p.dates.parse(rec[c.date]); err != nil {
		p.errs.add(p.name, line, "%v", err)
		return false
	}
	if !p.numbers(rec, line, number{name: "open", col: c.open, dst: &b.Open}, number{name: "high", col: c.high, dst: &b.High},
		number{name: "low", col: c.low, dst: &b.Low}, number{name: "close", col: c.close, dst: &b.Close},
		number{name: "volume", col: c.volume, dst: &b.Volume}, number{name: "dividend", col: c.dividend, dst: &b.Dividend, optional: true}) {
		return false
	}
	if c.split >= 0 {
		if s := strings.TrimSpace(rec[c.split]); s != "" && s != "0" {
			if b.SplitFactor, err = parseRatio(s); err != nil {
				p.errs.add(p.name, line, "%v", err)
				return false
			}
		}
	}
	if err := CheckBar(b); err != nil {
		p.errs.add(p.name, line, "%v", err)
		return false
	}
	p.cur = b
	return true
}

func isNull(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.EqualFold(s, "null") || strings.EqualFold(s, "nan")
}

// Bar returns the current bar.
func (p *PriceFile) Bar() ingest.BarRow { return p.cur }
