package importer

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// KindIntraday is the kind of 1-minute bar files. It is never detected
// from the header (a price file with a time column looks alike): pass
// --kind intraday.
const KindIntraday = "intraday"

// IntradayApplier applies an intraday load in one transaction;
// *ingest.Store is one.
type IntradayApplier interface {
	ApplyIntraday(ctx context.Context, l ingest.IntradayLoad) (ingest.LoadResult, error)
}

// timestampLayouts are the timestamp forms of vendors' minute files: ISO
// 8601 with an offset (Alpaca, Polygon exports, marketstack itself) or
// without one (most CSV exports, read in --tz), with "T" or a space.
var timestampLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02 15:04Z07:00",
}

// zonelessLayouts need --tz.
var zonelessLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"20060102 150405", // Stooq's <DATE>,<TIME> joined
}

// IntradayFile streams the 1-minute bars of one CSV file; it implements
// ingest.IntradaySource. Bad rows are collected and reported by Err
// once the file is read, as *RowErrors.
type IntradayFile struct {
	rowFile
	ts      int // timestamp column, or the date column when timeCol >= 0
	timeCol int
	cols    priceColumns
	zone    *time.Location
	cur     ingest.IntradayRow
}

// OpenIntraday opens a minute-bar file and reads its header. symbol
// overrides a symbol column; zone (nil: none) reads timestamps written
// without an offset.
func OpenIntraday(path, symbol string, zone *time.Location) (*IntradayFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := NewIntraday(path, f, symbol, zone)
	if err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

// NewIntraday reads minute bars from r, named name in error messages.
func NewIntraday(name string, r io.Reader, symbol string, zone *time.Location) (*IntradayFile, error) {
	rf, header, err := openRowFile(name, r)
	if err != nil {
		return nil, err
	}
	c := headerColumns(header)
	p := &IntradayFile{rowFile: rf, zone: zone, timeCol: -1}
	// A timestamp column, or a date and a time column (Stooq, MetaStock).
	p.ts = c.find("timestamp", "datetime", "time", "t", "date")
	if d, tm := c.find("date", "day"), c.find("time"); d >= 0 && tm >= 0 && c.find("timestamp", "datetime") < 0 {
		p.ts, p.timeCol = d, tm
	}
	p.cols = priceColumns{open: c.find("open", "o"), high: c.find("high", "h"), low: c.find("low", "l"),
		close: c.find("close", "c"), volume: c.find("volume", "vol", "v"), symbol: c.find("symbol", "ticker"),
		per: c.find("per"), dividend: -1, split: -1, date: p.ts}
	for what, i := range map[string]int{"timestamp": p.ts, "open": p.cols.open, "high": p.cols.high, "low": p.cols.low, "close": p.cols.close} {
		if i < 0 {
			return nil, fmt.Errorf("%s:1: not an intraday file: no %s column in header %q", name, what, strings.Join(header, ","))
		}
	}
	for _, i := range []int{p.ts, p.timeCol, p.cols.open, p.cols.high, p.cols.low, p.cols.close, p.cols.volume, p.cols.symbol, p.cols.per} {
		p.cols.width = max(p.cols.width, i+1)
	}
	if err := p.keyRows(rowKey{symbol: normalizeSymbol(symbol), symbolCol: p.cols.symbol,
		periodCol: p.cols.per, period: "1", periodName: "1 minute"}); err != nil {
		return nil, err
	}
	p.width = p.cols.width
	return p, nil
}

// Next reads up to the next good row.
func (p *IntradayFile) Next() bool { return p.next(p.parse) }

func (p *IntradayFile) parse(rec []string, line int) bool {
	c := p.cols
	b := ingest.IntradayRow{Line: line}
	var ok bool
	if b.Symbol, ok = p.rowSymbol(rec, line); !ok {
		return false
	}
	raw := strings.TrimSpace(rec[p.ts])
	if p.timeCol >= 0 {
		raw += " " + strings.TrimSpace(rec[p.timeCol])
	}
	ts, err := p.timestamp(raw)
	if err != nil {
		p.errs.add(p.name, line, "%v", err)
		return false
	}
	b.TS = ts
	if !p.numbers(rec, line, number{name: "open", col: c.open, dst: &b.Open}, number{name: "high", col: c.high, dst: &b.High},
		number{name: "low", col: c.low, dst: &b.Low}, number{name: "close", col: c.close, dst: &b.Close},
		number{name: "volume", col: c.volume, dst: &b.Volume}) {
		return false
	}
	if b.High < b.Low || b.Open > b.High || b.Open < b.Low || b.Close > b.High || b.Close < b.Low {
		p.errs.add(p.name, line, "open and close must lie within low %v and high %v", b.Low, b.High)
		return false
	}
	p.cur = b
	return true
}

// timestamp reads a bar's start: with its own offset, else in the --tz
// zone. A bar starts on a whole minute.
func (p *IntradayFile) timestamp(s string) (time.Time, error) {
	var t time.Time
	ok := false
	for _, l := range timestampLayouts {
		if v, err := time.Parse(l, s); err == nil {
			t, ok = v, true
			break
		}
	}
	if !ok {
		for _, l := range zonelessLayouts {
			if _, err := time.Parse(l, s); err != nil {
				continue
			}
			if p.zone == nil {
				return time.Time{}, fmt.Errorf("timestamp %q has no UTC offset: pass --tz (e.g. America/New_York)", s)
			}
			t, _ = time.ParseInLocation(l, s, p.zone)
			ok = true
			break
		}
	}
	if !ok {
		return time.Time{}, fmt.Errorf("invalid timestamp %q", s)
	}
	if t.Second() != 0 || t.Nanosecond() != 0 {
		return time.Time{}, fmt.Errorf("timestamp %q does not start a minute", s)
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("timestamp %q out of range", s)
	}
	return t.UTC(), nil
}

// Row returns the current bar.
func (p *IntradayFile) Row() ingest.IntradayRow { return p.cur }

// IntradayOptions steer an intraday import.
type IntradayOptions struct {
	// Symbol is the symbol of every row; it overrides a symbol column.
	Symbol string
	// Exchange is the listing MIC of tickers the import creates.
	Exchange string
	// Zone reads timestamps written without an offset; nil refuses them.
	Zone *time.Location
}

// ImportIntradayFile imports one minute-bar file in one transaction: on any
// error nothing of the file is applied; importing it again changes nothing.
func ImportIntradayFile(ctx context.Context, store IntradayApplier, path string, opts IntradayOptions) (FileResult, error) {
	start := time.Now()
	res := FileResult{Path: path, Kind: KindIntraday}
	first, err := OpenIntraday(path, opts.Symbol, opts.Zone)
	if err != nil {
		return res, err
	}
	defer first.Close()
	load := ingest.IntradayLoad{DefaultExchange: opts.Exchange, Rows: func() (ingest.IntradaySource, error) { return first, nil }}
	if res.Load, err = store.ApplyIntraday(ctx, load); err != nil {
		return res, err
	}
	res.Rows, res.Elapsed = res.Load.BarsRead, time.Since(start)
	return res, nil
}
