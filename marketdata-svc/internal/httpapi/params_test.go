package httpapi

import (
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

func TestEODQueryParams(t *testing.T) {
	q, err := newQueryParams(url.Values{"symbols": {"goog,gspc.indx"}, "date_to": {"2008-10-14"}, "limit": {"4"}, "sort": {"asc"}, "exchange": {"xnas"}, "unknown": {"x", "y"}}).eodQuery(false)
	if err != nil {
		t.Fatal(err)
	}
	want := marketdata.EODQuery{Symbols: []string{"GOOG", "GSPC.INDX"}, Exchange: "XNAS", DateTo: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC), Sort: marketdata.SortAsc, Limit: 4}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got %+v, want %+v", q, want)
	}
	q, err = newQueryParams(url.Values{"symbols": {"A"}}).eodQuery(true)
	if err != nil || q.Limit != defaultLimit || q.Offset != 0 || q.Sort != marketdata.SortDesc || !q.Latest {
		t.Errorf("defaults: %+v, %v", q, err)
	}

	_, err = newQueryParams(url.Values{"limit": {"0"}, "offset": {"-1"}, "date_from": {"2020-01-02"}, "date_to": {"2020-01-01"}, "sort": {"up"}, "exchange": {"X;"}}).eodQuery(false)
	var ve *fielderr.List
	if !errors.As(err, &ve) {
		t.Fatalf("want a validation error, got %v", err)
	}
	var params []string
	for _, p := range ve.Fields {
		params = append(params, p.Name)
	}
	if want := []string{"symbols", "date_from", "sort", "exchange", "limit", "offset"}; !reflect.DeepEqual(params, want) {
		t.Errorf("failing params %v, want %v", params, want)
	}

	_, err = newQueryParams(url.Values{"symbols": {"A", "B"}, "limit": {"1", "2"}}).eodQuery(false)
	if !errors.As(err, &ve) || len(ve.Fields) != 2 || ve.Fields[0].Key != "duplicate_parameter" {
		t.Errorf("duplicates: %v", err)
	}
}

func TestCacheKeyEquivalence(t *testing.T) {
	a, err := newQueryParams(url.Values{"symbols": {" goog,GSPC.indx , goog"}, "date_to": {"2008-10-14T12:00:00+0000"}, "sort": {"desc"}}).eodQuery(false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newQueryParams(url.Values{"symbols": {"GOOG,GSPC.INDX"}, "date_to": {"2008-10-14"}, "limit": {"100"}}).eodQuery(false)
	if err != nil {
		t.Fatal(err)
	}
	if a.CacheKey() != b.CacheKey() {
		t.Errorf("equivalent queries differ:\n%s\n%s", a.CanonicalKey(), b.CanonicalKey())
	}
	c := b
	c.Symbols = []string{"GSPC.INDX", "GOOG"}
	d := b
	d.Latest = true
	e := b
	e.Offset = 1
	for _, other := range []marketdata.EODQuery{c, d, e} {
		if other.CacheKey() == b.CacheKey() {
			t.Errorf("different query has the same key: %s", other.CanonicalKey())
		}
	}
}

func FuzzEODQueryKey(f *testing.F) {
	f.Add("symbols=goog,GSPC.INDX&date_to=2008-10-14&limit=4")
	f.Add("symbols=A&symbols=B")
	f.Add("symbols=msft&date_from=2020-01-02T00:00:00%2B0000&date_to=2020-01-01&sort=asc&offset=5")
	f.Add("symbols=%00&limit=-1&offset=99999999999999999999")
	f.Fuzz(func(t *testing.T, rawQuery string) {
		values, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		q, err := newQueryParams(values).eodQuery(false)
		if err != nil {
			var ve *fielderr.List
			if !errors.As(err, &ve) || len(ve.Fields) == 0 {
				t.Fatalf("error %v is not a validation error", err)
			}
			seen := map[string]bool{}
			for _, p := range ve.Fields {
				if seen[p.Name] {
					t.Fatalf("param %s listed twice", p.Name)
				}
				seen[p.Name] = true
			}
			return
		}
		// Re-parsing the normalised form of a query gives the same key.
		echo := url.Values{"symbols": {strings.Join(q.Symbols, ",")}, "sort": {string(q.Sort)}}
		if !q.DateFrom.IsZero() {
			echo.Set("date_from", marketdata.FormatDate(q.DateFrom))
		}
		if !q.DateTo.IsZero() {
			echo.Set("date_to", marketdata.FormatDate(q.DateTo))
		}
		if q.Exchange != "" {
			echo.Set("exchange", q.Exchange)
		}
		echo.Set("limit", strconv.Itoa(q.Limit))
		echo.Set("offset", strconv.Itoa(q.Offset))
		again, err := newQueryParams(echo).eodQuery(false)
		if err != nil || again.CacheKey() != q.CacheKey() {
			t.Fatalf("normalised query %v gives %v (%v); key %s vs %s", q, again, err, q.CanonicalKey(), again.CanonicalKey())
		}
	})
}

// BenchmarkQueryKey is the per-request work before a cache lookup: parse
// and normalise the query string, then build the canonical and cache keys.
func BenchmarkQueryKey(b *testing.B) {
	const raw = "access_key=tdm_x&symbols=syn000001,%20SYN000002,syn000001&date_from=2025-01-01&limit=100"
	b.ReportAllocs()
	for b.Loop() {
		q, err := parseQuery(raw).eodQuery(false)
		if err != nil {
			b.Fatal(err)
		}
		if len(q.CacheKey()) != 32 {
			b.Fatal("bad key")
		}
	}
}

func BenchmarkCanonicalKey(b *testing.B) {
	q := marketdata.EODQuery{Symbols: []string{"SYN000001", "SYN000002"}, Sort: marketdata.SortDesc, Limit: 100}
	b.ReportAllocs()
	for b.Loop() {
		_ = q.CanonicalKey()
	}
}

// FuzzParseQuery holds parseQuery to url.ParseQuery, which it replaces on
// the request path: the same values for every name, in the same order,
// and "malformed" exactly when the standard parser reports an error.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2&a=3", "symbols=A,B&limit=10", "a=%zz&b=1", "a=1;b=2&c=3", "&&=&a", "a+b=c+d&%41=%42",
		"x=%", "k", "=v", "a=1&a"} {
		f.Add(s)
	}
	f.Fuzz(checkParseQuery)
}

// TestParseQueryBound: net/url refuses a query of more than 10,000
// parameters whole, and so does parseQuery. (Not fuzz seeds: inputs this
// long slow every mutation of the fuzzer.)
func TestParseQueryBound(t *testing.T) {
	for _, n := range []int{maxQueryParams - 1, maxQueryParams} {
		raw := "limit=1" + strings.Repeat("&limit=1", n)
		checkParseQuery(t, raw)
	}
}

// checkParseQuery compares parseQuery(raw) with url.ParseQuery(raw).
func checkParseQuery(t *testing.T, raw string) {
	want, wantErr := url.ParseQuery(raw)
	p := parseQuery(raw)
	if gotErr := p.failed("query"); gotErr != (wantErr != nil) {
		t.Fatalf("parseQuery(%q): malformed %v, url.ParseQuery error %v", raw, gotErr, wantErr)
	}
	got := url.Values{}
	for _, q := range p.pairs {
		got[q.name] = append(got[q.name], q.value)
	}
	if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Fatalf("parseQuery(%q) = %v, url.ParseQuery %v", raw, got, want)
	}
	for name, vals := range want {
		if first, n := p.Lookup(name); first != vals[0] || n != len(vals) {
			t.Fatalf("Lookup(%q) = %q, %d; want %q, %d", name, first, n, vals[0], len(vals))
		}
	}
}
