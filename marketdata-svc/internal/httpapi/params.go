package httpapi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// Bounds of the query parameters, as marketstack documents them.
const (
	// maxSearchLen bounds the free-text search parameter.
	maxSearchLen = 100
	// defaultLimit and maxLimit are marketstack's page bounds.
	defaultLimit = 100
	maxLimit     = 1000
	// maxQueryParams is the most parameters a query may have, as in
	// url.ParseQuery.
	maxQueryParams = 10_000
)

// pageBounds are the limit rules of every list endpoint.
var pageBounds = pagination.Bounds{DefaultLimit: defaultLimit, MaxLimit: maxLimit}

// queryParams reads the query parameters of one request and collects one error
// per failing parameter, so a client learns every mistake at once. A
// parameter given twice is an error: silently picking one of two values
// hides client bugs. Parameters nobody asks for are ignored, as marketstack
// does.
//
// The parameters are kept as the pairs of the query, in order, not as
// url.Values: a request names a handful, so a scan finds one as fast as
// a map lookup, and the map and its slice per parameter were a third of
// a cache hit's allocations. TestParseQueryAgreesWithURLParseQuery holds
// the reading to net/url's.
type queryParams struct {
	pairs []queryPair
	// errs holds at most one entry per parameter; Key is marketstack's
	// error code of the parameter's context entry.
	errs fielderr.List
	// buf holds the pairs of a usual query without another allocation.
	buf [8]queryPair
}

// queryPair is one parameter of a query, unescaped.
type queryPair struct{ name, value string }

// newQueryParams starts reading q.
func newQueryParams(q url.Values) *queryParams {
	p := &queryParams{}
	p.pairs = p.buf[:0]
	for name, vals := range q {
		for _, v := range vals {
			p.pairs = append(p.pairs, queryPair{name, v})
		}
	}
	return p
}

// parseQuery starts reading a raw query string as url.ParseQuery does. A
// malformed one (a ';' separator, a bad %-escape) is an error of its own,
// "query": the standard parser would silently drop the offending pair, and
// with it perhaps the parameter the client meant.
func parseQuery(raw string) *queryParams {
	p := &queryParams{}
	p.pairs = p.buf[:0]
	// net/url's bound: a longer query is refused whole.
	malformed := strings.Count(raw, "&") >= maxQueryParams
	if malformed {
		raw = ""
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			malformed = true
			continue
		}
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		name, err1 := url.QueryUnescape(name)
		value, err2 := url.QueryUnescape(value)
		if err1 != nil || err2 != nil {
			malformed = true
			continue
		}
		p.pairs = append(p.pairs, queryPair{name, value})
	}
	if malformed {
		p.fail("query", "malformed_query", "must be a well-formed query string: pairs separated by '&', valid %-escapes")
	}
	return p
}

// Lookup returns the first value of name and how many were given; it
// makes p a pagination.Query.
func (p *queryParams) Lookup(name string) (first string, n int) {
	for _, q := range p.pairs {
		if q.name == name {
			if n == 0 {
				first = q.value
			}
			n++
		}
	}
	return first, n
}

// fail records a failing parameter unless it already failed.
func (p *queryParams) fail(param, key, msg string) {
	if !p.errs.Has(param) {
		p.errs.Fields = append(p.errs.Fields, fielderr.Field{Name: param, Key: key, Message: msg})
	}
}

// err returns the collected *fielderr.List, or nil.
func (p *queryParams) err() error { return p.errs.Err() }

// single returns the one value of name, trimmed.
func (p *queryParams) single(name string) (string, bool) {
	v, n := p.Lookup(name)
	if n == 0 {
		return "", false
	}
	if n > 1 {
		p.fail(name, "duplicate_parameter", "must be given at most once")
		return "", false
	}
	return strings.TrimSpace(v), true
}

// symbols reads a required (or optional) comma-separated symbols list.
func (p *queryParams) symbols(name string, required bool) []string {
	raw, ok := p.single(name)
	if !ok || raw == "" {
		if required && !p.failed(name) {
			p.fail(name, "missing_symbols", "You did not specify any symbols.")
		}
		return nil
	}
	syms, err := marketdata.ParseSymbols(raw)
	if err != nil {
		p.fail(name, "invalid_symbols", err.Error())
		return nil
	}
	return syms
}

// requiredParam reads a required single parameter.
func requiredParam(p *queryParams, name string) string {
	raw, ok := p.single(name)
	if raw == "" && (ok || !p.failed(name)) {
		p.fail(name, "missing_"+name, "You did not specify a "+name+".")
	}
	return raw
}

// date reads an optional date parameter.
func (p *queryParams) date(name string) time.Time {
	raw, ok := p.single(name)
	if !ok || raw == "" {
		return time.Time{}
	}
	d, err := marketdata.ParseDate(raw)
	if err != nil {
		p.fail(name, "invalid_date", err.Error())
		return time.Time{}
	}
	return d
}

// dateRange reads date_from and date_to and checks their order.
func (p *queryParams) dateRange() (from, to time.Time) {
	from, to = p.date("date_from"), p.date("date_to")
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		p.fail("date_from", "invalid_date_range", "must not be after date_to")
	}
	return from, to
}

// sort reads sort=DESC|ASC, DESC by default.
func (p *queryParams) sort() marketdata.SortOrder {
	raw, ok := p.single("sort")
	if !ok || raw == "" {
		return marketdata.SortDesc
	}
	switch strings.ToUpper(raw) {
	case "DESC":
		return marketdata.SortDesc
	case "ASC":
		return marketdata.SortAsc
	}
	p.fail("sort", "invalid_sort", "must be DESC or ASC")
	return marketdata.SortDesc
}

// exchange reads an optional MIC filter.
func (p *queryParams) exchange() string {
	raw, ok := p.single("exchange")
	if !ok || raw == "" {
		return ""
	}
	mic, err := marketdata.ParseMIC(raw)
	if err != nil {
		p.fail("exchange", "invalid_exchange", err.Error())
		return ""
	}
	return mic
}

// search reads an optional free-text search term.
func (p *queryParams) search() string {
	raw, ok := p.single("search")
	if !ok {
		return ""
	}
	if len(raw) > maxSearchLen || !validText(raw) {
		p.fail("search", "invalid_search", fmt.Sprintf("must be at most %d printable characters", maxSearchLen))
		return ""
	}
	return raw
}

// page reads limit and offset under pageBounds.
func (p *queryParams) page() pagination.Page {
	page, err := pagination.Parse(p, pageBounds)
	if ve, ok := errors.AsType[*fielderr.List](err); ok {
		for _, e := range ve.Fields {
			p.fail(e.Name, "invalid_"+e.Name, e.Message)
		}
		return pagination.Page{Limit: defaultLimit}
	}
	return page
}

// limitOffset is page for a query that takes the page as its Limit and
// Offset.
func (p *queryParams) limitOffset() (limit, offset int) {
	page := p.page()
	return page.Limit, page.Offset
}

func (p *queryParams) failed(name string) bool { return p.errs.Has(name) }

// eodQuery reads the parameters of GET /v1/eod and /v1/eod/latest.
func (p *queryParams) eodQuery(latest bool) (marketdata.EODQuery, error) {
	out := marketdata.EODQuery{Symbols: p.symbols("symbols", true), Latest: latest}
	out.DateFrom, out.DateTo = p.dateRange()
	out.Sort = p.sort()
	out.Exchange = p.exchange()
	out.Limit, out.Offset = p.limitOffset()
	return out, p.err()
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
