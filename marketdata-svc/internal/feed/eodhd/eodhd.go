// Package eodhd is the sync adapter of EODHD's end-of-day API: per
// symbol /api/eod/{CODE}.{EXCHANGE} with /api/splits and /api/div, and
// /api/eod-bulk-last-day/{EXCHANGE}, a whole exchange's day in one call,
// which keeps a full universe current. The token goes in the api_token
// parameter.
//
// The bulk answer's rows are read by a scanner of their own (rowScanner,
// bulkscan.go), not encoding/json, which cost more than storing the day:
// BenchmarkBulkRows, a 50,000-row day (7.7 MB), on the project's 2-core
// machine under load: rowScanner 63–150 ms/op, 0.9 MB and 100,000
// allocations; encoding/json's Decoder 190–310 ms/op, 12 MB and 400,000
// allocations. FuzzRowScanner holds the scanner to encoding/json's reading
// of any input.
package eodhd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Name, DefaultURL and TokenParam configure the adapter's client.
const (
	Name       = "eodhd"
	DefaultURL = "https://eodhd.com"
	TokenParam = "api_token"
)

// exchanges maps the MICs EODHD covers to its exchange codes. US
// listings share one code, and their symbols carry no suffix here.
var exchanges = map[string]string{
	"XNAS": "US", "XNYS": "US", "XASE": "US", "ARCX": "US", "BATS": "US", "IEXG": "US",
	"XLON": "LSE", "XETR": "XETRA", "XPAR": "PA", "XAMS": "AS", "XTSE": "TO", "XSWX": "SW",
}

// Provider is the EODHD adapter, over its client.
type Provider struct {
	*feed.Client
	// SpoolDir holds the bulk answers being loaded ("" is the system's).
	SpoolDir string
}

// New returns the adapter sending its requests through c.
func New(c *feed.Client) *Provider { return &Provider{Client: c} }

// code is symbol as EODHD spells it: AAPL is AAPL.US, VOD.XLON VOD.LSE.
func code(symbol string) string {
	if base, mic, ok := strings.Cut(symbol, "."); ok {
		if ex, ok := exchanges[mic]; ok {
			return base + "." + ex
		}
		return symbol
	}
	return symbol + ".US"
}

type eodRow struct {
	Code string `json:"code"`
	feed.JSONBar
}

type splitRow struct {
	Code  string `json:"code"`
	Date  string `json:"date"`
	Split string `json:"split"` // "2.000000/1.000000"
}

type divRow struct {
	Code            string      `json:"code"`
	Date            string      `json:"date"`
	Value           feed.Number `json:"value"`
	UnadjustedValue feed.Number `json:"unadjustedValue"`
	Dividend        feed.Number `json:"dividend"` // the bulk form
}

func (p *Provider) getJSON(ctx context.Context, path string, q url.Values, dst any) error {
	q.Set("fmt", "json")
	body, err := p.Get(ctx, path, q, nil)
	if err != nil {
		return err
	}
	defer body.Close()
	if err := json.NewDecoder(body).Decode(dst); err != nil {
		return fmt.Errorf("%s: unreadable answer: %w", Name, err)
	}
	return nil
}

// History reads symbol's bars, splits and dividends within w.
func (p *Provider) History(ctx context.Context, symbol string, w feed.Window) (feed.History, error) {
	var h feed.History
	c := url.PathEscape(code(symbol))
	span := func() url.Values {
		return url.Values{"from": {w.From.Format(time.DateOnly)}, "to": {w.To.Format(time.DateOnly)}}
	}
	var rows []eodRow
	if err := p.getJSON(ctx, "/api/eod/"+c, span(), &rows); err != nil {
		return h, err
	}
	for _, r := range rows {
		h.Records = append(h.Records, r.Record(symbol))
	}
	var splits []splitRow
	if err := p.getJSON(ctx, "/api/splits/"+c, span(), &splits); err != nil {
		return h, err
	}
	var divs []divRow
	if err := p.getJSON(ctx, "/api/div/"+c, span(), &divs); err != nil {
		return h, err
	}
	bySymbol := func(string) string { return symbol }
	h.Splits = actions(splits, func(s splitRow) string { return s.Code }, bySymbol, split, &h.Rejects)
	h.Dividends = actions(divs, func(d divRow) string { return d.Code }, bySymbol, dividend, &h.Rejects)
	return h, nil
}

// actions converts rows of splits or dividends with conv, each under the
// symbol its code names, and appends the rows it refuses to rejects.
func actions[R, T any](rows []R, code func(R) string, symbol func(string) string, conv func(string, R) (T, *feed.Reject), rejects *[]feed.Reject) []T {
	var out []T
	for _, r := range rows {
		v, rj := conv(symbol(code(r)), r)
		if rj != nil {
			*rejects = append(*rejects, *rj)
			continue
		}
		out = append(out, v)
	}
	return out
}

func split(symbol string, s splitRow) (marketdata.Split, *feed.Reject) {
	d, err := feed.ParseDate(s.Date)
	a, b, ok := strings.Cut(s.Split, "/")
	x, y := feed.ParseNumber(strings.TrimSpace(a)), feed.ParseNumber(strings.TrimSpace(b))
	if err != nil || !ok || x.Bad != "" || y.Bad != "" || !(x.V > 0) || !(y.V > 0) {
		return marketdata.Split{}, &feed.Reject{Provider: Name, Symbol: symbol, Date: s.Date, Reason: fmt.Sprintf("malformed split %q", s.Split)}
	}
	return marketdata.Split{Symbol: symbol, Date: d, Factor: x.V / y.V}, nil
}

func dividend(symbol string, r divRow) (marketdata.Dividend, *feed.Reject) {
	d, err := feed.ParseDate(r.Date)
	v := r.UnadjustedValue // the amount paid then; value is restated for later splits
	if !v.Set {
		v = r.Value
	}
	if !v.Set {
		v = r.Dividend
	}
	if err != nil || !v.Set || v.Bad != "" || v.V < 0 {
		return marketdata.Dividend{}, &feed.Reject{Provider: Name, Symbol: symbol, Date: r.Date, Reason: "malformed dividend"}
	}
	return marketdata.Dividend{Symbol: symbol, Date: d, Amount: v.V}, nil
}

// ExchangeDay reads a whole exchange's day from /api/eod-bulk-last-day,
// with its splits and dividends (type=splits, type=dividends). The bars'
// answer is spooled to a file and streamed from it while it arrives, never
// held in memory.
func (p *Provider) ExchangeDay(ctx context.Context, exchange string, day time.Time) (*feed.Day, bool, error) {
	ex, ok := exchanges[exchange]
	if !ok {
		return nil, false, nil
	}
	symbol := func(c string) string {
		if ex == "US" {
			return c
		}
		return c + "." + exchange
	}
	q := func(kind string) url.Values {
		v := url.Values{"date": {day.Format(time.DateOnly)}, "fmt": {"json"}}
		if kind != "" {
			v.Set("type", kind)
		}
		return v
	}
	path := "/api/eod-bulk-last-day/" + ex
	d := &feed.Day{}
	var splits []splitRow
	if err := p.getJSON(ctx, path, q("splits"), &splits); err != nil {
		return nil, true, err
	}
	var divs []divRow
	if err := p.getJSON(ctx, path, q("dividends"), &divs); err != nil {
		return nil, true, err
	}
	d.Splits = actions(splits, func(s splitRow) string { return s.Code }, symbol, split, &d.Rejects)
	d.Dividends = actions(divs, func(r divRow) string { return r.Code }, symbol, dividend, &d.Rejects)
	body, err := p.Get(ctx, path, q(""), nil)
	if err != nil {
		return nil, true, err
	}
	f, err := os.CreateTemp(p.SpoolDir, "eodhd-bulk-*.json")
	if err != nil {
		body.Close()
		return nil, true, fmt.Errorf("spool bulk answer: %w", err)
	}
	sp := newSpool(f, body)
	d.Close = sp.Close
	d.Records = func() (feed.RecordSource, error) {
		sc := newRowScanner(sp.reader())
		if err := sc.start(); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		return &bulkRecords{sc: sc, symbol: symbol}, nil
	}
	return d, true, nil
}

// bulkRecords reads a bulk answer one row at a time.
type bulkRecords struct {
	sc     *rowScanner
	symbol func(string) string
	rows   int
	cur    feed.Record
	err    error
	done   bool
}

func (b *bulkRecords) Next() bool {
	if b.err != nil || b.done {
		return false
	}
	var r eodRow
	ok, err := b.sc.next(&r, b.rows == 0)
	if err != nil {
		b.err = fmt.Errorf("%s: unreadable bulk row %d: %w", Name, b.rows+1, err)
		return false
	}
	if !ok {
		b.done = true
		return false
	}
	b.rows++
	sym := ""
	if r.Code != "" {
		sym = b.symbol(r.Code)
	}
	b.cur = r.Record(sym)
	return true
}

func (b *bulkRecords) Record() feed.Record { return b.cur }

func (b *bulkRecords) Err() error { return b.err }
