package feedfake

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A kept bulk day must never outlive a restatement: the sync's
// corrections are tested through this fake.
func TestBulkDayFollowsARestatedBar(t *testing.T) {
	f := New("tok")
	f.Synthetic = 3
	get := func() string {
		t.Helper()
		rec := httptest.NewRecorder()
		f.EODHD().ServeHTTP(rec, httptest.NewRequest("GET", "/api/eod-bulk-last-day/US?date=2024-03-08&fmt=json&api_token=tok", nil))
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	before := get()
	if n := strings.Count(before, `"code":`); n != 3 {
		t.Fatalf("%d bars in the day, want 3: %s", n, before)
	}
	if again := get(); again != before {
		t.Fatalf("the same day answered twice differs:\n%s\n%s", before, again)
	}
	f.SetBar("S00001", Bar{Date: "2024-03-08", Open: "1", High: "2", Low: "0.5", Close: "1.5", Volume: "10"})
	after := get()
	if !strings.Contains(after, `"code":"S00001","exchange_short_name":"US","date":"2024-03-08","open":1,`) {
		t.Fatalf("restated bar not served: %s", after)
	}
	if strings.Count(after, `"code":`) != 3 {
		t.Fatalf("restated day has %d bars, want 3", strings.Count(after, `"code":`))
	}
}

// A day rendered while a bar was restated holds the old bar: it must not
// be kept for the requests after the restatement.
func TestBulkDayRenderedDuringARestatementIsNotKept(t *testing.T) {
	f := New("tok")
	f.Synthetic = 3
	date := time.Date(2024, 3, 8, 0, 0, 0, 0, time.UTC)
	f.mu.Lock()
	gen := f.restated
	f.mu.Unlock()
	stale := f.renderDay(date)
	f.SetBar("S00001", Bar{Date: "2024-03-08", Open: "1", High: "2", Low: "0.5", Close: "1.5", Volume: "10"})
	f.keepDay("2024-03-08", gen, stale)
	if got := string(f.bulkDay(date)); got == string(stale) || !strings.Contains(got, `"code":"S00001","exchange_short_name":"US","date":"2024-03-08","open":1,`) {
		t.Fatalf("the day rendered before the restatement was kept: %s", got)
	}
}

// A named universe serves its day under the given names, the rest under
// their S names, and the bulk actions of that day as EODHD's bulk
// endpoint lists them.
func TestNamedSyntheticDay(t *testing.T) {
	f := New("tok")
	f.Synthetic = 3
	f.SetNames([]string{"AAPL", "MSFT"})
	f.SetSplit("MSFT", "2024-03-08", 2)
	f.SetDividend("AAPL", "2024-03-08", 0.25)
	get := func(typ string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		f.EODHD().ServeHTTP(rec, httptest.NewRequest("GET", "/api/eod-bulk-last-day/US?date=2024-03-08&fmt=json&api_token=tok"+typ, nil))
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	day := get("")
	for _, sym := range []string{"AAPL", "MSFT", "S00002"} {
		if !strings.Contains(day, `"code":"`+sym+`"`) {
			t.Errorf("%s missing from the day: %s", sym, day)
		}
	}
	if strings.Contains(day, `"S00000"`) || !f.known("MSFT") || f.known("S00001") || !f.known("S00002") || f.known("S00003") {
		t.Errorf("named symbols also known under their S names, or names unknown: %s", day)
	}
	if s := get("&type=splits"); !strings.Contains(s, `"code":"MSFT","exchange":"US","date":"2024-03-08","split":"2/1.000000"`) {
		t.Errorf("splits: %s", s)
	}
	if d := get("&type=dividends"); !strings.Contains(d, `"code":"AAPL","exchange":"US","date":"2024-03-08","dividend":0.25`) {
		t.Errorf("dividends: %s", d)
	}
}
