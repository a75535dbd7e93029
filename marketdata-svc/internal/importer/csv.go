// Package importer reads market data from CSV files (daily prices in the
// common Yahoo, Stooq and Tiingo layouts, ticker and exchange metadata,
// splits and dividends) into loads for the store, one transaction per file.
//
// Price files stream straight into PostgreSQL's COPY; a bad row does not
// stop the parse, so that every bad row (up to a cap) is reported as
// "file:line: reason", and then nothing of the file is applied.
package importer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// maxReported caps the bad rows listed in one error.
const maxReported = 20

// RowErrors lists the bad rows of one file.
type RowErrors struct {
	Rows []string // "file:line: reason"
	More int      // bad rows not listed
}

// Error lists the bad rows, one a line.
func (e *RowErrors) Error() string {
	msg := strings.Join(e.Rows, "\n")
	if e.More > 0 {
		msg += fmt.Sprintf("\n(and %d more bad rows)", e.More)
	}
	return msg
}

func (e *RowErrors) add(file string, line int, format string, args ...any) {
	if len(e.Rows) >= maxReported {
		e.More++
		return
	}
	e.Rows = append(e.Rows, fmt.Sprintf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
}

func (e *RowErrors) err() error {
	if len(e.Rows) == 0 {
		return nil
	}
	return e
}

// normalizeHeader folds a column name to lowercase letters and digits, so
// "Adj. Close*", "adjClose" and "<CLOSE>" compare by their words.
func normalizeHeader(h string) string {
	var b strings.Builder
	for _, r := range strings.TrimPrefix(h, "\ufeff") {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// columns maps normalised column names to their index.
type columns map[string]int

func headerColumns(header []string) columns {
	c := columns{}
	for i, h := range header {
		n := normalizeHeader(h)
		if _, dup := c[n]; !dup {
			c[n] = i
		}
	}
	return c
}

// find returns the index of the first present alias, or -1.
func (c columns) find(aliases ...string) int {
	for _, a := range aliases {
		if i, ok := c[a]; ok {
			return i
		}
	}
	return -1
}

// dateLayouts are the date forms found in real daily files: ISO (Yahoo,
// Tiingo, vega-datasets), ISO with time (Tiingo's API), compact (Stooq's
// bulk files) and Yahoo's old "19-Sep-03".
var dateLayouts = []string{
	time.DateOnly,
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05.000Z07:00",
	"20060102",
	"2-Jan-06",
	"2-Jan-2006",
	"2006/01/02",
}

// dateParser parses dates, trying the layout that matched last time first:
// files use one layout throughout.
type dateParser struct{ last int }

func (p *dateParser) parse(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(dateLayouts[p.last], s); err == nil {
		return utcDay(t), nil
	}
	for i, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			p.last = i
			return utcDay(t), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid date %q", s)
}

func utcDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func parseNumber(name, s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid %s %q", name, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative %s %s", name, s)
	}
	return v, nil
}

// parseRatio reads a split as a factor ("4", "0.1") or a ratio ("4:1",
// "4/1", "1-for-10").
func parseRatio(s string) (float64, error) {
	s = strings.TrimSpace(s)
	for _, sep := range []string{":", "/", "-for-"} {
		if a, b, ok := strings.Cut(s, sep); ok {
			x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
			y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
			if err1 != nil || err2 != nil || !(x > 0) || !(y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				return 0, fmt.Errorf("invalid split ratio %q", s)
			}
			return x / y, nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid split factor %q", s)
	}
	return v, nil
}

// normalizeSymbol upper-cases a symbol and drops Stooq's ".US" market
// suffix, which marketstack does not use for US listings.
func normalizeSymbol(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	return strings.TrimSuffix(s, ".US")
}

var errNoSymbol = errors.New("no symbol: pass --symbol or give the file a symbol column")
