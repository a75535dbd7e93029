package importer

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
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
// marketdatadb.BarSource. Bad rows are collected and reported by Err once
// the file is read, as *RowErrors.
type PriceFile struct {
	name    string
	file    io.Closer
	r       *csv.Reader
	layout  string
	cols    priceColumns
	symbol  string
	dates   dateParser
	errs    RowErrors
	cur     marketdatadb.BarRow
	skipped int
	readErr error
}

// OpenPrices opens a price file and reads its header. symbol overrides any
// symbol column; without either the file is refused.
func OpenPrices(path, symbol string) (*PriceFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := newPriceFile(path, f, symbol)
	if err != nil {
		f.Close()
		return nil, err
	}
	p.file = f
	return p, nil
}

// NewPrices reads price rows from r, named name in error messages.
func NewPrices(name string, r io.Reader, symbol string) (*PriceFile, error) {
	p, err := newPriceFile(name, r, symbol)
	if err != nil {
		return nil, err
	}
	if c, ok := r.(io.Closer); ok {
		p.file = c
	}
	return p, nil
}

func newPriceFile(name string, r io.Reader, symbol string) (*PriceFile, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 256*1024))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	header, err := readHeader(cr, name)
	if err != nil {
		return nil, err
	}
	layout, cols, err := DetectPriceLayout(header)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	symbol = normalizeSymbol(symbol)
	if symbol == "" && cols.symbol < 0 {
		return nil, fmt.Errorf("%s: %w", name, errNoSymbol)
	}
	return &PriceFile{name: name, r: cr, layout: layout, cols: cols, symbol: symbol}, nil
}

// Layout names the detected layout.
func (p *PriceFile) Layout() string { return p.layout }

// Skipped counts rows without prices (Yahoo's "null" rows), which are not
// errors.
func (p *PriceFile) Skipped() int { return p.skipped }

// Close closes the file.
func (p *PriceFile) Close() error {
	if p.file == nil {
		return nil
	}
	err := p.file.Close()
	p.file = nil
	return err
}

// Next reads up to the next good row.
func (p *PriceFile) Next() bool {
	for {
		rec, err := p.r.Read()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				p.errs.add(p.name, pe.Line, "%v", pe.Err)
				continue
			}
			p.readErr = fmt.Errorf("%s: %w", p.name, err)
			return false
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		line, _ := p.r.FieldPos(0) // only valid after a successful Read
		if p.parse(rec, line) {
			return true
		}
	}
}

func (p *PriceFile) parse(rec []string, line int) bool {
	c := p.cols
	if len(rec) < c.width {
		p.errs.add(p.name, line, "expected %d fields, got %d", c.width, len(rec))
		return false
	}
	if isNull(rec[c.open]) && isNull(rec[c.high]) && isNull(rec[c.low]) && isNull(rec[c.close]) {
		p.skipped++
		return false
	}
	if c.per >= 0 && strings.TrimSpace(rec[c.per]) != "D" {
		p.errs.add(p.name, line, "period %q is not daily (D)", rec[c.per])
		return false
	}
	b := marketdatadb.BarRow{Symbol: p.symbol, Line: line}
	if b.Symbol == "" {
		if b.Symbol = normalizeSymbol(rec[c.symbol]); b.Symbol == "" {
			p.errs.add(p.name, line, "empty symbol")
			return false
		}
	}
	var err error
	if b.Date, err = p.dates.parse(rec[c.date]); err != nil {
		p.errs.add(p.name, line, "%v", err)
		return false
	}
	for _, f := range []struct {
		name string
		col  int
		dst  *float64
	}{{"open", c.open, &b.Open}, {"high", c.high, &b.High}, {"low", c.low, &b.Low}, {"close", c.close, &b.Close},
		{"volume", c.volume, &b.Volume}, {"dividend", c.dividend, &b.Dividend}} {
		if f.col < 0 || (f.name == "dividend" && strings.TrimSpace(rec[f.col]) == "") {
			continue
		}
		if *f.dst, err = parseNumber(f.name, rec[f.col]); err != nil {
			p.errs.add(p.name, line, "%v", err)
			return false
		}
	}
	if c.split >= 0 {
		if s := strings.TrimSpace(rec[c.split]); s != "" && s != "0" {
			if b.SplitFactor, err = parseRatio(s); err != nil {
				p.errs.add(p.name, line, "%v", err)
				return false
			}
		}
	}
	if b.High < b.Low {
		p.errs.add(p.name, line, "high %v is below low %v", b.High, b.Low)
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
func (p *PriceFile) Bar() marketdatadb.BarRow { return p.cur }

// Err reports a read failure or, once the file is read, its bad rows.
func (p *PriceFile) Err() error {
	if p.readErr != nil {
		return p.readErr
	}
	return p.errs.err()
}
