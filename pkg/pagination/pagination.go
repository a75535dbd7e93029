// Package pagination parses limit and offset, builds the
// {limit, offset, count, total} envelope, and writes RFC 8288 Link headers
// for endpoints that answer with a bare array.
package pagination

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

// MaxOffset bounds offset so that a hostile value cannot make the database
// walk an absurd number of rows or overflow an int.
const MaxOffset = math.MaxInt32

// Bounds are an endpoint's limit rules.
type Bounds struct {
	// DefaultLimit applies when no limit is sent. Zero means "no limit":
	// the endpoint returns every record.
	DefaultLimit int
	MaxLimit     int
}

// Page is a parsed limit and offset.
type Page struct {
	// Limit is zero when the page is unbounded (no limit sent and no default).
	Limit  int
	Offset int
}

// Bounded reports whether the page has a limit.
func (p Page) Bounded() bool { return p.Limit > 0 }

// Query is a request's query parameters as Parse reads them: the first
// value given for a name, and how many values were given. url.Values serve
// as Values; a service that reads its query without building a map (a map
// and a slice per parameter, on every request) passes its own reader.
type Query interface {
	Lookup(name string) (first string, n int)
}

// Values is the Query of url.Values.
type Values url.Values

// Lookup implements Query.
func (v Values) Lookup(name string) (string, int) {
	vals := v[name]
	if len(vals) == 0 {
		return "", 0
	}
	return vals[0], len(vals)
}

// Parse reads limit and offset from q under b. A value that is repeated,
// non-numeric, negative or over the maximum is a *fielderr.List entry
// naming the parameter.
func Parse(q Query, b Bounds) (Page, error) {
	page := Page{Limit: b.DefaultLimit}
	var errs fielderr.List
	maxLimit := b.MaxLimit
	if maxLimit <= 0 {
		maxLimit = math.MaxInt // no maximum
	}
	if n, ok, err := number(q, "limit", 1, maxLimit); err != nil {
		errs.Fields = append(errs.Fields, *err)
	} else if ok {
		page.Limit = n
	}
	if n, ok, err := number(q, "offset", 0, MaxOffset); err != nil {
		errs.Fields = append(errs.Fields, *err)
	} else if ok {
		page.Offset = n
	}
	if err := errs.Err(); err != nil {
		return Page{}, err
	}
	return page, nil
}

// number reads the parameter name, if given, as a whole number from lo to
// hi.
func number(q Query, name string, lo, hi int) (int, bool, *fielderr.Field) {
	v, ok, err := single(q, name)
	if err != nil || !ok {
		return 0, false, err
	}
	n, convErr := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case convErr != nil:
		return 0, false, &fielderr.Field{Name: name, Message: "must be a whole number"}
	case n < lo || n > hi:
		return 0, false, &fielderr.Field{Name: name, Message: fmt.Sprintf("must be between %d and %d", lo, hi)}
	}
	return n, true, nil
}

func single(q Query, name string) (string, bool, *fielderr.Field) {
	v, n := q.Lookup(name)
	switch {
	case n == 0:
		return "", false, nil
	case n > 1:
		return "", false, &fielderr.Field{Name: name, Message: "must be given at most once"}
	default:
		return v, true, nil
	}
}

// Envelope is the pagination object of a {pagination, data} answer.
type Envelope struct {
	Limit  int   `json:"limit"`
	Offset int   `json:"offset"`
	Count  int   `json:"count"`
	Total  int64 `json:"total"`
}

// NewEnvelope describes a page of count records out of total.
func NewEnvelope(p Page, count int, total int64) Envelope {
	return Envelope{Limit: p.Limit, Offset: p.Offset, Count: count, Total: total}
}

// Links returns the RFC 8288 Link header value (first, prev, next, last)
// for page p of total records at u, keeping u's other query parameters.
// It returns "" for an unbounded page.
func Links(u *url.URL, p Page, total int64) string {
	if !p.Bounded() {
		return ""
	}
	link := func(offset int64, rel string) string {
		q := u.Query()
		q.Set("limit", strconv.Itoa(p.Limit))
		q.Set("offset", strconv.FormatInt(offset, 10))
		target := url.URL{Path: u.Path, RawQuery: q.Encode()}
		return "<" + target.String() + `>; rel="` + rel + `"`
	}
	limit := int64(p.Limit)
	offset := int64(p.Offset)
	last := int64(0)
	if total > 0 {
		last = (total - 1) / limit * limit
	}
	links := []string{link(0, "first")}
	if offset > 0 {
		links = append(links, link(max(offset-limit, 0), "prev"))
	}
	if offset+limit < total {
		links = append(links, link(offset+limit, "next"))
	}
	links = append(links, link(last, "last"))
	return strings.Join(links, ", ")
}
