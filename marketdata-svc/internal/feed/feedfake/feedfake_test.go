package feedfake

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
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
