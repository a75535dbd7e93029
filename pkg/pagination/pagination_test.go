package pagination

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

var bounds = Bounds{DefaultLimit: 100, MaxLimit: 1000}

func TestParse(t *testing.T) {
	cases := []struct {
		query string
		b     Bounds
		want  Page
	}{
		{"", bounds, Page{Limit: 100}},
		{"", Bounds{MaxLimit: 1000}, Page{}},
		{"limit=1", bounds, Page{Limit: 1}},
		{"limit=1000&offset=5", bounds, Page{Limit: 1000, Offset: 5}},
		{"limit=%2010", bounds, Page{Limit: 10}},
		{"offset=0", bounds, Page{Limit: 100}},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		got, err := Parse(Values(q), c.b)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.query, got, err, c.want)
		}
	}
}

func TestParseErrorsNameEachParameter(t *testing.T) {
	cases := map[string][]string{
		"limit=0":                    {"limit"},
		"limit=-1":                   {"limit"},
		"limit=1001":                 {"limit"},
		"limit=abc":                  {"limit"},
		"limit=1e3":                  {"limit"},
		"limit=99999999999999999999": {"limit"},
		"offset=-1":                  {"offset"},
		"offset=x":                   {"offset"},
		"offset=3000000000":          {"offset"},
		"limit=1&limit=2":            {"limit"},
		"limit=0&offset=-5":          {"limit", "offset"},
	}
	for query, params := range cases {
		q, _ := url.ParseQuery(query)
		_, err := Parse(Values(q), bounds)
		var verr *fielderr.List
		if !errors.As(err, &verr) {
			t.Errorf("Parse(%q) err = %v, want *fielderr.List", query, err)
			continue
		}
		var got []string
		for _, p := range verr.Fields {
			got = append(got, p.Name)
			if p.Message == "" {
				t.Errorf("Parse(%q): empty message for %s", query, p.Name)
			}
		}
		if strings.Join(got, ",") != strings.Join(params, ",") {
			t.Errorf("Parse(%q) failing params = %v, want %v", query, got, params)
		}
	}
}

func TestNewEnvelope(t *testing.T) {
	e := NewEnvelope(Page{Limit: 10, Offset: 20}, 3, 23)
	if e != (Envelope{Limit: 10, Offset: 20, Count: 3, Total: 23}) {
		t.Fatalf("NewEnvelope = %+v", e)
	}
}

func TestLinks(t *testing.T) {
	u, _ := url.Parse("/v1/notes?tag=a&limit=10&offset=10")
	got := Links(u, Page{Limit: 10, Offset: 10}, 35)
	want := `</v1/notes?limit=10&offset=0&tag=a>; rel="first", ` +
		`</v1/notes?limit=10&offset=0&tag=a>; rel="prev", ` +
		`</v1/notes?limit=10&offset=20&tag=a>; rel="next", ` +
		`</v1/notes?limit=10&offset=30&tag=a>; rel="last"`
	if got != want {
		t.Fatalf("Links =\n%s\nwant\n%s", got, want)
	}
	if got := Links(u, Page{Limit: 10, Offset: 30}, 35); strings.Contains(got, `rel="next"`) {
		t.Errorf("last page has a next link: %s", got)
	}
	if got := Links(u, Page{Limit: 10}, 0); strings.Contains(got, "prev") || !strings.Contains(got, `offset=0&tag=a>; rel="last"`) {
		t.Errorf("empty result links: %s", got)
	}
	if got := Links(u, Page{}, 35); got != "" {
		t.Errorf("unbounded page has links: %s", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"limit=10&offset=0", "limit=-1", "offset=99999999999999999999", "limit=1&limit=2", "limit=%00", "limit= 5", "limit=+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, err := Parse(Values(q), bounds)
		if err != nil {
			var verr *fielderr.List
			if !errors.As(err, &verr) || len(verr.Fields) == 0 {
				t.Fatalf("Parse(%q) returned %v", raw, err)
			}
			return
		}
		if p.Limit < 1 || p.Limit > bounds.MaxLimit || p.Offset < 0 || p.Offset > MaxOffset {
			t.Fatalf("Parse(%q) = %+v out of bounds", raw, p)
		}
		if vals := q["limit"]; len(vals) == 1 {
			if n, err := strconv.Atoi(strings.TrimSpace(vals[0])); err != nil || n != p.Limit {
				t.Fatalf("Parse(%q) limit %d does not match %q", raw, p.Limit, vals[0])
			}
		}
	})
}
