package importer

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Kinds of file the importer reads.
const (
	KindPrices    = "prices"
	KindTickers   = "tickers"
	KindExchanges = "exchanges"
	KindSplits    = "splits"
	KindDividends = "dividends"
)

// Kinds lists the accepted --kind values.
var Kinds = []string{KindPrices, KindTickers, KindExchanges, KindSplits, KindDividends}

// Options steer an import. An empty Kind is detected from the header.
type Options struct {
	Kind string
	// Symbol is the symbol of every row; it overrides a symbol column.
	Symbol string
	// Exchange is the listing MIC of tickers created or imported without one.
	Exchange string
}

// Applier applies a load in one transaction; *ingest.Store is one.
type Applier interface {
	Apply(ctx context.Context, l ingest.Load) (ingest.LoadResult, error)
}

// FileResult reports one imported file.
type FileResult struct {
	Path    string
	Kind    string
	Layout  string // price files only
	Rows    int64
	Skipped int
	Elapsed time.Duration
	Load    ingest.LoadResult
}

// RowsPerSecond is the import throughput of the file.
func (r FileResult) RowsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Elapsed.Seconds()
}

// ImportFile imports one file in one transaction: on any error nothing of
// the file is applied.
func ImportFile(ctx context.Context, store Applier, path string, opts Options) (FileResult, error) {
	start := time.Now()
	res := FileResult{Path: path, Kind: opts.Kind}
	if res.Kind == "" {
		k, err := detectKind(path)
		if err != nil {
			return res, err
		}
		res.Kind = k
	}
	var load ingest.Load
	var rows int64
	var err error
	var opened []*PriceFile
	switch res.Kind {
	case KindPrices:
		first, err := OpenPrices(path, opts.Symbol)
		if err != nil {
			return res, err
		}
		opened = append(opened, first)
		res.Layout = first.Layout()
		load.DefaultExchange = opts.Exchange
		load.Bars = func() (ingest.BarSource, error) {
			if first != nil { // the header is already read and checked
				p := first
				first = nil
				return p, nil
			}
			p, err := OpenPrices(path, opts.Symbol)
			if err != nil {
				return nil, err
			}
			opened = append(opened, p)
			return p, nil
		}
	case KindTickers:
		load.Tickers, err = readTickers(path, opts)
		rows = int64(len(load.Tickers))
	case KindExchanges:
		load.Exchanges, err = readExchanges(path)
		rows = int64(len(load.Exchanges))
	case KindSplits:
		load.Splits, err = readSplits(path, opts)
		rows = int64(len(load.Splits))
	case KindDividends:
		load.Dividends, err = readDividends(path, opts)
		rows = int64(len(load.Dividends))
	default:
		return res, fmt.Errorf("unknown kind %q (one of %s)", res.Kind, strings.Join(Kinds, ", "))
	}
	if err != nil {
		return res, err
	}
	defer func() {
		for _, p := range opened {
			p.Close()
		}
	}()
	res.Load, err = Load(ctx, store, load)
	if err != nil {
		return res, err
	}
	if res.Kind == KindPrices {
		rows = res.Load.BarsRead
		last := opened[len(opened)-1]
		res.Skipped = last.Skipped()
	}
	res.Rows, res.Elapsed = rows, time.Since(start)
	return res, nil
}

// detectKind tells the kind of file from its header.
func detectKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return "", fmt.Errorf("%s:1: cannot read header: %w", path, err)
	}
	c := headerColumns(header)
	switch {
	case c.find("open") >= 0 && c.find("close") >= 0:
		return KindPrices, nil
	case c.find("mic") >= 0 && c.find("symbol", "ticker") < 0:
		return KindExchanges, nil
	case c.find("factor", "ratio", "split", "stocksplits", "splitfactor") >= 0:
		return KindSplits, nil
	case c.find("amount", "dividend", "dividends", "divcash", "cash") >= 0:
		return KindDividends, nil
	case c.find("name") >= 0 && c.find("symbol", "ticker") >= 0:
		return KindTickers, nil
	}
	return "", fmt.Errorf("%s:1: cannot tell the kind of file from header %q; pass --kind", path, strings.Join(header, ","))
}

// table is a small CSV file read whole, with its header mapped.
type table struct {
	path string
	cols columns
	rows [][]string
	line []int
}

// readHeader reads the first record of the CSV file name; an empty file
// is an error on its line 1.
func readHeader(r *csv.Reader, name string) ([]string, error) {
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:1: empty file", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return header, nil
}

func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTableFrom(path, f)
}

// readTableFrom reads a table from in, named path in error messages.
func readTableFrom(path string, in io.Reader) (*table, error) {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	header, err := readHeader(r, path)
	if err != nil {
		return nil, err
	}
	t := &table{path: path, cols: headerColumns(header)}
	var errs RowErrors
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				errs.add(path, pe.Line, "%v", pe.Err)
				continue
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, rec)
		t.line = append(t.line, line)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return t, nil
}

// field returns the trimmed value of the first present alias, or "".
func (t *table) field(rec []string, aliases ...string) string {
	i := t.cols.find(aliases...)
	if i < 0 || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

func (t *table) require(aliases ...string) error {
	if t.cols.find(aliases...) < 0 {
		return fmt.Errorf("%s:1: missing column %s", t.path, aliases[0])
	}
	return nil
}

func readExchanges(path string) ([]marketdata.Exchange, error) {
	t, err := readTable(path)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(t.require("mic"), t.require("name")); err != nil {
		return nil, err
	}
	var out []marketdata.Exchange
	var errs RowErrors
	for i, rec := range t.rows {
		e := marketdata.Exchange{
			MIC: strings.ToUpper(t.field(rec, "mic")), Name: t.field(rec, "name"), Acronym: t.field(rec, "acronym"),
			CountryCode: strings.ToUpper(t.field(rec, "countrycode")), Country: t.field(rec, "country"),
			City: t.field(rec, "city"), Website: t.field(rec, "website"), Timezone: t.field(rec, "timezone"),
			Currency: strings.ToUpper(t.field(rec, "currency")),
		}
		if e.MIC == "" || e.Name == "" {
			errs.add(path, t.line[i], "mic and name are required")
			continue
		}
		if e.Timezone != "" {
			if _, err := time.LoadLocation(e.Timezone); err != nil {
				errs.add(path, t.line[i], "unknown timezone %q", e.Timezone)
				continue
			}
		}
		out = append(out, e)
	}
	return out, errs.err()
}

func readTickers(path string, opts Options) ([]ingest.TickerRow, error) {
	t, err := readTable(path)
	if err != nil {
		return nil, err
	}
	if err := t.require("symbol", "ticker"); err != nil {
		return nil, err
	}
	var out []ingest.TickerRow
	var errs RowErrors
	for i, rec := range t.rows {
		r := ingest.TickerRow{
			Symbol: strings.ToUpper(t.field(rec, "symbol", "ticker")), Name: t.field(rec, "name"),
			AssetType: t.field(rec, "assettype", "type"), PriceCurrency: strings.ToUpper(t.field(rec, "pricecurrency", "currency")),
			ExchangeMIC: strings.ToUpper(t.field(rec, "exchangemic", "mic", "exchange")),
		}
		if r.ExchangeMIC == "" {
			r.ExchangeMIC = opts.Exchange
		}
		switch strings.ToLower(t.field(rec, "hasintraday")) {
		case "", "false", "0", "no":
		case "true", "1", "yes":
			r.HasIntraday = true
		default:
			errs.add(path, t.line[i], "has_intraday must be true or false")
			continue
		}
		if r.Symbol == "" {
			errs.add(path, t.line[i], "empty symbol")
			continue
		}
		out = append(out, r)
	}
	return out, errs.err()
}

func actionSymbol(t *table, rec []string, opts Options) string {
	if opts.Symbol != "" {
		return normalizeSymbol(opts.Symbol)
	}
	return normalizeSymbol(t.field(rec, "symbol", "ticker"))
}

func readSplits(path string, opts Options) ([]marketdata.Split, error) {
	return readActions(path, opts, []string{"factor", "ratio", "split", "stocksplits", "splitfactor"}, parseRatio,
		func(symbol string, date time.Time, factor float64) marketdata.Split {
			return marketdata.Split{Symbol: symbol, Date: date, Factor: factor}
		})
}

func readDividends(path string, opts Options) ([]marketdata.Dividend, error) {
	return readActions(path, opts, []string{"amount", "dividend", "dividends", "divcash", "cash"},
		func(s string) (float64, error) { return parseNumber("amount", s) },
		func(symbol string, date time.Time, amount float64) marketdata.Dividend {
			return marketdata.Dividend{Symbol: symbol, Date: date, Amount: amount}
		})
}

// readActions reads a corporate-action file, splits or dividends: per row a
// symbol (a column, or opts.Symbol), an ex-date, and one value found under
// any of valueCols and read by parseValue.
func readActions[T any](path string, opts Options, valueCols []string, parseValue func(string) (float64, error),
	build func(symbol string, date time.Time, value float64) T) ([]T, error) {
	t, err := readTable(path)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(t.require("date", "exdate"), t.require(valueCols...)); err != nil {
		return nil, err
	}
	if opts.Symbol == "" && t.cols.find("symbol", "ticker") < 0 {
		return nil, fmt.Errorf("%s: %w", path, errNoSymbol)
	}
	var out []T
	var errs RowErrors
	var dates dateParser
	for i, rec := range t.rows {
		symbol := actionSymbol(t, rec, opts)
		if symbol == "" {
			errs.add(path, t.line[i], "empty symbol")
			continue
		}
		date, err := dates.parse(t.field(rec, "date", "exdate"))
		if err != nil {
			errs.add(path, t.line[i], "%v", err)
			continue
		}
		value, err := parseValue(t.field(rec, valueCols...))
		if err != nil {
			errs.add(path, t.line[i], "%v", err)
			continue
		}
		out = append(out, build(symbol, date, value))
	}
	return out, errs.err()
}
