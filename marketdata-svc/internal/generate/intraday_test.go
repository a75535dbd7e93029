package generate_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Every generated day agrees with its daily bar, on a full session, a half
// day and a session in another zone, and is the same on every run.
func TestMinutesAgreeWithTheDay(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	cases := []struct {
		bar     generate.DayBar
		sess    marketdata.Session
		zone    *time.Location
		minutes int
		first   string
	}{
		{generate.DayBar{Symbol: "GOOG", Date: day("2008-10-14"), Open: 393.53, High: 394.5, Low: 357, Close: 362.71, Volume: 7784800},
			marketdata.SessionOf("XNAS"), ny, 390, "2008-10-14T13:30:00Z"},
		{generate.DayBar{Symbol: "MSFT", Date: day("2024-11-29"), Open: 420.09, High: 424.88, Low: 417.8, Close: 423.46, Volume: 16271900},
			marketdata.SessionOf("XNAS"), ny, 210, "2024-11-29T14:30:00Z"},
		{generate.DayBar{Symbol: "7203", Date: day("2024-03-08"), Open: 3700, High: 3700, Low: 3700, Close: 3700, Volume: 7},
			marketdata.SessionOf("XTKS"), tokyo, 360, "2024-03-08T00:00:00Z"},
	}
	for _, c := range cases {
		rows := generate.Minutes(7, c.bar, c.sess, c.zone)
		if len(rows) != c.minutes || rows[0].TS.Format(time.RFC3339) != c.first {
			t.Fatalf("%s: %d minutes from %s, want %d from %s", c.bar.Symbol, len(rows), rows[0].TS.Format(time.RFC3339), c.minutes, c.first)
		}
		hi, lo, vol := math.Inf(-1), math.Inf(1), 0.0
		for i, r := range rows {
			if r.Low > r.Open || r.Low > r.Close || r.High < r.Open || r.High < r.Close || r.Volume < 0 {
				t.Errorf("%s minute %d inconsistent: %+v", c.bar.Symbol, i, r)
			}
			if i > 0 && !r.TS.Equal(rows[i-1].TS.Add(time.Minute)) {
				t.Errorf("%s minute %d does not follow the one before", c.bar.Symbol, i)
			}
			hi, lo, vol = math.Max(hi, r.High), math.Min(lo, r.Low), vol+r.Volume
		}
		if rows[0].Open != c.bar.Open || rows[len(rows)-1].Close != c.bar.Close || hi != c.bar.High || lo != c.bar.Low || vol != c.bar.Volume {
			t.Errorf("%s: open %v close %v high %v low %v volume %v, want %+v", c.bar.Symbol, rows[0].Open, rows[len(rows)-1].Close, hi, lo, vol, c.bar)
		}
		if again := generate.Minutes(7, c.bar, c.sess, c.zone); !reflect.DeepEqual(again, rows) {
			t.Errorf("%s: not deterministic", c.bar.Symbol)
		}
	}
}
