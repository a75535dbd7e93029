package pagination

import (
	"net/url"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	q := Values{"limit": {"100"}, "offset": {"200"}, "symbols": {"AAPL"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(q, bounds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinks(b *testing.B) {
	u, _ := url.Parse("/v1/notes?tag=a&limit=10&offset=10")
	b.ReportAllocs()
	for b.Loop() {
		Links(u, Page{Limit: 10, Offset: 10}, 35)
	}
}
