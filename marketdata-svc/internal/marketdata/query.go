package marketdata

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// Bounds of the query parameters, as marketstack documents them.
const (
	// MaxSymbols is how many symbols one request may name.
	MaxSymbols = 100
	// MaxSymbolLen bounds one symbol; the longest real ones (with an
	// exchange suffix such as ".INDX") stay well below it.
	MaxSymbolLen = 20
	// MaxSearchLen bounds the free-text search parameter.
	MaxSearchLen = 100
	// DefaultLimit and MaxLimit are marketstack's page bounds.
	DefaultLimit = 100
	MaxLimit     = 1000
)

// PageBounds are the limit rules of every list endpoint.
var PageBounds = pagination.Bounds{DefaultLimit: DefaultLimit, MaxLimit: MaxLimit}

// ParamError names one failing query parameter: Key is a stable
// machine-readable reason, Message a sentence for people.
type ParamError struct {
	Param   string
	Key     string
	Message string
}

// ValidationError lists the failing parameters of a request, one entry per
// parameter, in the order the parameters were checked.
type ValidationError struct {
	Params []ParamError
}

// Error joins the failures.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Params))
	for i, p := range e.Params {
		parts[i] = p.Param + ": " + p.Message
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// Params reads the query parameters of one request and collects one error
// per failing parameter, so a client learns every mistake at once. A
// parameter given twice is an error: silently picking one of two values
// hides client bugs. Parameters nobody asks for are ignored, as marketstack
// does.
type Params struct {
	values url.Values
	errs   []ParamError
}

// NewParams starts reading q.
func NewParams(q url.Values) *Params { return &Params{values: q} }

// ParseRawQuery starts reading a raw query string. A malformed one (a ';'
// separator, a bad %-escape) is an error of its own, "query": the standard
// parser would silently drop the offending pair, and with it perhaps the
// parameter the client meant.
func ParseRawQuery(raw string) *Params {
	values, err := url.ParseQuery(raw)
	p := &Params{values: values}
	if err != nil {
		p.Fail("query", "malformed_query", "must be a well-formed query string: pairs separated by '&', valid %-escapes")
	}
	return p
}

// Fail records a failing parameter unless it already failed.
func (p *Params) Fail(param, key, msg string) {
	for _, e := range p.errs {
		if e.Param == param {
			return
		}
	}
	p.errs = append(p.errs, ParamError{Param: param, Key: key, Message: msg})
}

// Err returns the collected *ValidationError, or nil.
func (p *Params) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return &ValidationError{Params: p.errs}
}

// single returns the one value of name, trimmed.
func (p *Params) single(name string) (string, bool) {
	vals, ok := p.values[name]
	if !ok {
		return "", false
	}
	if len(vals) > 1 {
		p.Fail(name, "duplicate_parameter", "must be given at most once")
		return "", false
	}
	return strings.TrimSpace(vals[0]), true
}

// Symbols reads a required (or optional) comma-separated symbols list.
func (p *Params) Symbols(name string, required bool) []string {
	raw, ok := p.single(name)
	if !ok || raw == "" {
		if required && !p.failed(name) {
			p.Fail(name, "missing_symbols", "You did not specify any symbols.")
		}
		return nil
	}
	syms, err := ParseSymbols(raw)
	if err != nil {
		p.Fail(name, "invalid_symbols", err.Error())
		return nil
	}
	return syms
}

// Date reads an optional date parameter.
func (p *Params) Date(name string) time.Time {
	raw, ok := p.single(name)
	if !ok || raw == "" {
		return time.Time{}
	}
	d, err := ParseDate(raw)
	if err != nil {
		p.Fail(name, "invalid_date", err.Error())
		return time.Time{}
	}
	return d
}

// DateRange reads date_from and date_to and checks their order.
func (p *Params) DateRange() (from, to time.Time) {
	from, to = p.Date("date_from"), p.Date("date_to")
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		p.Fail("date_from", "invalid_date_range", "must not be after date_to")
	}
	return from, to
}

// Sort reads sort=DESC|ASC, DESC by default.
func (p *Params) Sort() SortOrder {
	raw, ok := p.single("sort")
	if !ok || raw == "" {
		return SortDesc
	}
	switch strings.ToUpper(raw) {
	case "DESC":
		return SortDesc
	case "ASC":
		return SortAsc
	}
	p.Fail("sort", "invalid_sort", "must be DESC or ASC")
	return SortDesc
}

// Exchange reads an optional MIC filter.
func (p *Params) Exchange() string {
	raw, ok := p.single("exchange")
	if !ok || raw == "" {
		return ""
	}
	mic, err := ParseMIC(raw)
	if err != nil {
		p.Fail("exchange", "invalid_exchange", err.Error())
		return ""
	}
	return mic
}

// Search reads an optional free-text search term.
func (p *Params) Search() string {
	raw, ok := p.single("search")
	if !ok {
		return ""
	}
	if len(raw) > MaxSearchLen || !validText(raw) {
		p.Fail("search", "invalid_search", fmt.Sprintf("must be at most %d printable characters", MaxSearchLen))
		return ""
	}
	return raw
}

// Page reads limit and offset under PageBounds.
func (p *Params) Page() pagination.Page {
	page, err := pagination.Parse(p.values, PageBounds)
	if ve, ok := err.(*pagination.ValidationError); ok {
		for _, e := range ve.Params {
			p.Fail(e.Param, "invalid_"+e.Param, e.Message)
		}
		return pagination.Page{Limit: DefaultLimit}
	}
	return page
}

func (p *Params) failed(name string) bool {
	for _, e := range p.errs {
		if e.Param == name {
			return true
		}
	}
	return false
}

// EODQuery reads the parameters of GET /v1/eod and /v1/eod/latest.
func (p *Params) EODQuery(latest bool) (EODQuery, error) {
	out := EODQuery{Symbols: p.Symbols("symbols", true), Latest: latest}
	out.DateFrom, out.DateTo = p.DateRange()
	out.Sort = p.Sort()
	out.Exchange = p.Exchange()
	page := p.Page()
	out.Limit, out.Offset = page.Limit, page.Offset
	return out, p.Err()
}

// ParseSymbols splits a comma-separated symbols list: each symbol trimmed,
// upper-cased and checked, duplicates dropped (the first occurrence keeps
// its place, because the order of symbols orders the records of a date).
// Empty items ("A,,B", a trailing comma) are skipped.
func ParseSymbols(raw string) ([]string, error) {
	// Counting commas first bounds the work on a hostile 10,000-item list.
	if strings.Count(raw, ",") >= MaxSymbols*4 {
		return nil, fmt.Errorf("at most %d symbols", MaxSymbols)
	}
	var out []string
	for item := range strings.SplitSeq(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		sym, err := NormaliseSymbol(item)
		if err != nil {
			return nil, err
		}
		dup := false
		for _, s := range out {
			if s == sym {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if len(out) == MaxSymbols {
			return nil, fmt.Errorf("at most %d symbols", MaxSymbols)
		}
		out = append(out, sym)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("at least one symbol is required")
	}
	return out, nil
}

// NormaliseSymbol upper-cases one symbol and checks its characters:
// letters, digits, '.', '-' and '^' (as in BRK-B, GSPC.INDX, ^GSPC).
func NormaliseSymbol(s string) (string, error) {
	if s == "" || len(s) > MaxSymbolLen {
		return "", fmt.Errorf("a symbol has 1 to %d characters", MaxSymbolLen)
	}
	buf := []byte(s)
	for i, c := range buf {
		switch {
		case c >= 'a' && c <= 'z':
			buf[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '^':
		default:
			return "", fmt.Errorf("a symbol has only letters, digits, '.', '-' and '^'")
		}
	}
	return string(buf), nil
}

// ParseMIC checks a market identifier code (letters or digits; "INDX" is
// the pseudo-exchange of indices), upper-cases it, and turns an ISO 10383
// MIC that marketstack spells differently into marketstack's code (XETR
// into XETRA).
func ParseMIC(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || len(s) > 10 {
		return "", fmt.Errorf("must be a market identifier code such as XNAS")
	}
	buf := []byte(s)
	for i, c := range buf {
		switch {
		case c >= 'a' && c <= 'z':
			buf[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return "", fmt.Errorf("must be a market identifier code such as XNAS")
		}
	}
	if code, ok := micAliases[string(buf)]; ok {
		return code, nil
	}
	return string(buf), nil
}

// dateLayouts are the accepted date forms: a calendar date, and ISO 8601
// timestamps with an offset written as marketstack writes it (+0000), as
// RFC 3339 writes it (+00:00 or Z), or with no offset.
var dateLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04",
}

// ParseDate reads YYYY-MM-DD or an ISO 8601 timestamp and returns UTC
// midnight of its calendar date as written: a trading day is a date on the
// exchange's calendar, so a timestamp's own offset names the day meant.
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, fmt.Errorf("must be a date YYYY-MM-DD or an ISO 8601 timestamp")
	}
	var t time.Time
	var err error
	if len(s) == 10 {
		t, err = time.Parse(time.DateOnly, s)
	} else {
		for _, layout := range dateLayouts {
			if t, err = time.Parse(layout, s); err == nil {
				break
			}
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("must be a date YYYY-MM-DD or an ISO 8601 timestamp")
	}
	y, m, d := t.Date()
	if y < 1000 {
		return time.Time{}, fmt.Errorf("must be a date after the year 1000")
	}
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
}

// FormatDate writes a date as YYYY-MM-DD.
func FormatDate(t time.Time) string { return t.Format(time.DateOnly) }

// CanonicalKey is the normalised text of an EOD query: two requests that
// mean the same thing (case, spacing, repeated symbols, date forms) have
// the same key, and any difference in meaning changes it. Symbol order is
// kept, because it orders the records within a date.
func (q EODQuery) CanonicalKey() string {
	b := make([]byte, 0, 64+len(q.Symbols)*8)
	b = append(b, "eod|s="...)
	for i, s := range q.Symbols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	b = append(b, "|x="...)
	b = append(b, q.Exchange...)
	b = append(b, "|f="...)
	b = appendKeyDate(b, q.DateFrom)
	b = append(b, "|t="...)
	b = appendKeyDate(b, q.DateTo)
	b = append(b, "|latest="...)
	b = strconv.AppendBool(b, q.Latest)
	b = append(b, "|sort="...)
	b = append(b, q.Sort...)
	b = append(b, "|limit="...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	b = append(b, "|offset="...)
	b = strconv.AppendInt(b, int64(q.Offset), 10)
	return string(b)
}

// CacheKey is a fixed-size digest of CanonicalKey, fit for a Redis key
// whatever the number of symbols. 128 bits of SHA-256 make a collision,
// which would serve one query's records for another, not a practical risk.
func (q EODQuery) CacheKey() string {
	sum := sha256.Sum256([]byte(q.CanonicalKey()))
	return hex.EncodeToString(sum[:16])
}

func appendKeyDate(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return t.AppendFormat(b, time.DateOnly)
}

// validText reports whether s is valid UTF-8 without control characters.
func validText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}
