package eodjson_test

import (
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// benchPage is an EOD page of 100 records over 2 symbols, as the
// benchmark's cache-hit workload asks for.
func benchPage() marketdata.EODPage {
	p := marketdata.EODPage{Total: 12_000}
	day := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		sym, name := "SYN000001", "Synthetic One Inc."
		if i%2 == 1 {
			sym, name = "SYN000002", "Synthetic Two & Sons"
		}
		f := 100 + float64(i)*0.37
		p.Bars = append(p.Bars, marketdata.Bar{Symbol: sym, Date: day.AddDate(0, 0, -i/2), Open: f, High: f + 1.25, Low: f - 0.5, Close: f + 0.12,
			Volume: 1_234_567, AdjOpen: f, AdjHigh: f + 1.25, AdjLow: f - 0.5, AdjClose: f + 0.12, AdjVolume: 1_234_567, SplitFactor: 1,
			Name: name, ExchangeCode: "NASDAQ", Exchange: "XNAS", AssetType: "Stock", PriceCurrency: "USD"})
	}
	return p
}

func BenchmarkEncodeEOD(b *testing.B) {
	p := benchPage()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(eodjson.Encode(p).Data)
	}
	b.SetBytes(int64(n))
}

func TestDerivedOncePerPageAndKey(t *testing.T) {
	calls := 0
	compute := func() string { calls++; return "v" }
	plain := eodjson.Encode(benchPage())
	plain.Derived([]byte("a"), compute)
	plain.Derived([]byte("a"), compute)
	if calls != 2 {
		t.Fatalf("a page that is not memoized must compute each time: %d calls", calls)
	}
	calls = 0
	page := plain.Memoized()
	copyOfPage := page
	page.Derived([]byte("a"), compute)
	copyOfPage.Derived([]byte("a"), compute)
	if calls != 1 {
		t.Fatalf("copies of a memoized page share the value: %d calls", calls)
	}
	page.Derived([]byte("b"), compute)
	if calls != 2 {
		t.Fatalf("another key recomputes: %d calls", calls)
	}
}
