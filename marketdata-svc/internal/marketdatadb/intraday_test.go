package marketdatadb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

var newYork = mustZone("America/New_York")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// minutes makes 1-minute bars of sym from local wall-clock start (New
// York), one a minute for n minutes: open = 100 + i, close = open + 0.5,
// high = open + 1, low = open - 1, volume = 10 + i; skip leaves minutes out.
func minutes(sym, localStart string, n int, skip ...int) []marketdatadb.IntradayRow {
	t0, err := time.ParseInLocation("2006-01-02 15:04", localStart, newYork)
	if err != nil {
		panic(err)
	}
	var out []marketdatadb.IntradayRow
	for i := range n {
		skipped := false
		for _, s := range skip {
			if s == i {
				skipped = true
			}
		}
		if skipped {
			continue
		}
		o := 100 + float64(i)
		out = append(out, marketdatadb.IntradayRow{Symbol: sym, TS: t0.Add(time.Duration(i) * time.Minute),
			Open: o, High: o + 1, Low: o - 1, Close: o + 0.5, Volume: 10 + float64(i)})
	}
	return out
}

func seedIntraday(t *testing.T, s *marketdatadb.Store, rows []marketdatadb.IntradayRow) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Apply(ctx, marketdatadb.Load{Exchanges: []marketdata.Exchange{xnas},
		Tickers: []marketdatadb.TickerRow{{Symbol: "AAA", Name: "A", ExchangeMIC: "XNAS"}, {Symbol: "BBB", Name: "B", ExchangeMIC: "XNAS"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(rows)}); err != nil {
		t.Fatal(err)
	}
}

// bucketText is "HH:MM o h l c v" in New York time, for short expectations.
func bucketText(b marketdata.IntradayBar) string {
	return fmt.Sprintf("%s %g %g %g %g %g", b.Date.In(newYork).Format("01-02 15:04"), b.Open, b.High, b.Low, b.Close, b.Volume)
}

func TestIntradayAggregation(t *testing.T) {
	s := openStore(t)
	var rows []marketdatadb.IntradayRow
	// 2024-03-08 (EST, UTC-5): 09:00-10:59 local, pre-market half hour
	// included, minute 45 (09:45) missing: a gap inside a bucket; and no
	// bars at all 10:00-10:29 (minutes 60..89): a gap of whole buckets.
	gap := []int{45}
	for i := 60; i < 90; i++ {
		gap = append(gap, i)
	}
	rows = append(rows, minutes("AAA", "2024-03-08 09:00", 120, gap...)...)
	// 2024-03-11 (EDT, UTC-4, after the change on the 10th): 09:30-10:29.
	rows = append(rows, minutes("AAA", "2024-03-11 09:30", 60)...)
	// 2024-11-29, the day after Thanksgiving, closes at 13:00: 12:30-13:29,
	// the half hour after the close is after hours.
	rows = append(rows, minutes("AAA", "2024-11-29 12:30", 60)...)
	// 2024-12-02, a full day: 15:30-16:29, the last half hour after hours.
	rows = append(rows, minutes("AAA", "2024-12-02 15:30", 60)...)
	seedIntraday(t, s, rows)

	day := func(d string) time.Time { return mustDay(d) }
	cases := []struct {
		name       string
		from, to   string
		interval   int
		afterHours bool
		want       []string
	}{
		{"1hour buckets start at the 09:30 open, pre-market left out", "2024-03-08", "2024-03-08", 60, false, []string{
			// 09:30-10:29: minutes 30..59 (45 missing), none 60..89.
			"03-08 09:30 130 160 129 159.5 " + fmt.Sprint(sumVol(30, 60, 45)),
			// 10:30-10:59: minutes 90..119.
			"03-08 10:30 190 220 189 219.5 " + fmt.Sprint(sumVol(90, 120)),
		}},
		{"after_hours adds the pre-market bucket, aligned to the open", "2024-03-08", "2024-03-08", 60, true, []string{
			"03-08 08:30 100 130 99 129.5 " + fmt.Sprint(sumVol(0, 30)),
			"03-08 09:30 130 160 129 159.5 " + fmt.Sprint(sumVol(30, 60, 45)),
			"03-08 10:30 190 220 189 219.5 " + fmt.Sprint(sumVol(90, 120)),
		}},
		{"bucket edges: 15min, the bar at 09:45 is missing, a gap has no bucket", "2024-03-08", "2024-03-08", 15, false, []string{
			"03-08 09:30 130 145 129 144.5 " + fmt.Sprint(sumVol(30, 45)),
			"03-08 09:45 146 160 145 159.5 " + fmt.Sprint(sumVol(46, 60)),
			"03-08 10:30 190 205 189 204.5 " + fmt.Sprint(sumVol(90, 105)),
			"03-08 10:45 205 220 204 219.5 " + fmt.Sprint(sumVol(105, 120)),
		}},
		{"daylight saving: 09:30 local either side of the change", "2024-03-08", "2024-03-11", 1440, false, []string{
			"03-08 00:00 130 220 129 219.5 " + fmt.Sprint(sumVol(30, 60, 45)+sumVol(90, 120)),
			"03-11 00:00 100 160 99 159.5 " + fmt.Sprint(sumVol(0, 60)),
		}},
		{"half day: the session ends at 13:00", "2024-11-29", "2024-11-29", 60, false, []string{
			"11-29 12:30 100 130 99 129.5 " + fmt.Sprint(sumVol(0, 30)),
		}},
		{"half day with after_hours", "2024-11-29", "2024-11-29", 60, true, []string{
			"11-29 12:30 100 160 99 159.5 " + fmt.Sprint(sumVol(0, 60)),
		}},
		{"full day close at 16:00; 1min buckets are the bars", "2024-12-02", "2024-12-02", 30, false, []string{
			"12-02 15:30 100 130 99 129.5 " + fmt.Sprint(sumVol(0, 30)),
		}},
		{"full day after_hours", "2024-12-02", "2024-12-02", 30, true, []string{
			"12-02 15:30 100 130 99 129.5 " + fmt.Sprint(sumVol(0, 30)),
			"12-02 16:00 130 160 129 159.5 " + fmt.Sprint(sumVol(30, 60)),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := s.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: day(c.from), ToDay: day(c.to),
				Interval: c.interval, AfterHours: c.afterHours, Sort: marketdata.SortAsc, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range p.Bars {
				got = append(got, bucketText(b))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") || p.Total != int64(len(c.want)) {
				t.Errorf("total %d, got\n%s\nwant\n%s", p.Total, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}

	t.Run("the UTC start of a 1hour bucket moves with the offset", func(t *testing.T) {
		p, err := s.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: day("2024-03-08"), ToDay: day("2024-03-11"),
			Interval: 60, Sort: marketdata.SortAsc, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Bars) != 3 || p.Bars[0].Date.Format(time.RFC3339) != "2024-03-08T14:30:00Z" || p.Bars[2].Date.Format(time.RFC3339) != "2024-03-11T13:30:00Z" {
			t.Errorf("bars %+v", p.Bars)
		}
	})

	t.Run("1min is the stored bars, paged without gaps or repeats", func(t *testing.T) {
		q := marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: day("2024-03-08"), ToDay: day("2024-03-08"), Interval: 1, AfterHours: true, Sort: marketdata.SortDesc, Limit: 1000}
		full, err := s.Intraday(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if full.Total != 89 || len(full.Bars) != 89 {
			t.Fatalf("total %d", full.Total)
		}
		var joined []marketdata.IntradayBar
		for off := 0; off < 100; off += 7 {
			q.Limit, q.Offset = 7, off
			p, err := s.Intraday(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != 89 {
				t.Errorf("page at %d: total %d", off, p.Total)
			}
			joined = append(joined, p.Bars...)
		}
		if fmt.Sprint(joined) != fmt.Sprint(full.Bars) {
			t.Error("pages do not join up to the full list")
		}
	})

	t.Run("timestamps bound minutes; latest is the last bucket", func(t *testing.T) {
		from, _ := time.Parse(time.RFC3339, "2024-03-08T14:30:00Z") // 09:30 EST
		to, _ := time.Parse(time.RFC3339, "2024-03-08T14:34:00Z")
		p, err := s.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, From: from, To: to, Interval: 1, Sort: marketdata.SortAsc, Limit: 100})
		if err != nil || p.Total != 5 {
			t.Errorf("inclusive instants: %d %v", p.Total, err)
		}
		p, err = s.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA", "BBB"}, Latest: true, Interval: 60, Sort: marketdata.SortDesc, Limit: 100})
		if err != nil || p.Total != 1 || len(p.Bars) != 1 || bucketText(p.Bars[0]) != "12-02 15:30 100 130 99 129.5 "+fmt.Sprint(sumVol(0, 30)) {
			t.Errorf("latest: %+v %v", p, err)
		}
		if _, err := s.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"NOPE"}, Interval: 60}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
			t.Errorf("unknown symbols: %v", err)
		}
	})
}

func mustDay(s string) time.Time { return day(s) }

// sumVol sums the volumes 10+i of minutes [from, to), but skip.
func sumVol(from, to int, skip ...int) float64 {
	var v float64
	for i := from; i < to; i++ {
		skipped := false
		for _, s := range skip {
			if s == i {
				skipped = true
			}
		}
		if !skipped {
			v += 10 + float64(i)
		}
	}
	return v
}

func TestIntradayLoad(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	rows := minutes("AAA", "2024-03-08 09:30", 30)
	seedIntraday(t, s, rows)
	t.Run("a re-import changes nothing", func(t *testing.T) {
		res, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(rows)})
		if err != nil || res.Changed() || res.BarsChanged != 0 || res.BarsRead != 30 {
			t.Errorf("re-import: %+v %v", res, err)
		}
		tk, err := s.Ticker(ctx, "AAA")
		if err != nil || !tk.HasIntraday {
			t.Errorf("has_intraday: %+v %v", tk, err)
		}
	})
	t.Run("a changed minute is updated and bumps the version", func(t *testing.T) {
		changed := append([]marketdatadb.IntradayRow(nil), rows...)
		changed[3].Close = 1
		changed[3].Low = 1
		res, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(changed)})
		if err != nil || res.BarsChanged != 1 || !res.Changed() {
			t.Errorf("update: %+v %v", res, err)
		}
	})
	t.Run("minutes after the stored ones are added beside them", func(t *testing.T) {
		next := append(minutes("AAA", "2024-03-11 09:30", 10), minutes("BBB", "2024-03-11 09:30", 10)...)
		res, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(next)})
		if err != nil || res.BarsRead != 20 || res.BarsChanged != 20 || !res.Changed() {
			t.Errorf("next day: %+v %v", res, err)
		}
		for _, sym := range []string{"AAA", "BBB"} {
			p, err := s.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{sym}, FromDay: mustDay("2024-03-11"), Interval: 1, Limit: 100})
			if err != nil || p.Total != 10 {
				t.Errorf("%s on the next day: %d minutes, %v", sym, p.Total, err)
			}
		}
	})
	t.Run("a load over stored minutes adds only the new ones", func(t *testing.T) {
		over := minutes("AAA", "2024-03-08 09:30", 40)[20:] // minutes 20-29 stored, unchanged
		res, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(over)})
		if err != nil || res.BarsRead != 20 || res.BarsChanged != 10 {
			t.Errorf("overlap: %+v %v", res, err)
		}
	})
	t.Run("a duplicate minute rolls the whole load back", func(t *testing.T) {
		more := minutes("AAA", "2024-04-01 09:30", 5) // a new month, too
		more = append(more, more[2])
		more[len(more)-1].Line = 99
		_, err := s.ApplyIntraday(ctx, marketdatadb.IntradayLoad{Rows: marketdatadb.IntradayRows(more)})
		var dup *marketdatadb.DuplicateMinutesError
		if !errors.As(err, &dup) || len(dup.Duplicates) != 1 {
			t.Fatalf("err %v", err)
		}
		// The new month takes the plain insert first; its unique
		// violation must still end as the duplicate's report.
		if d := dup.Duplicates[0]; !d.TS.Equal(more[2].TS) || len(d.Lines) != 2 || d.Lines[1] != 99 {
			t.Errorf("duplicate %+v, want %s on lines [%d 99]", d, more[2].TS, more[2].Line)
		}
		p, err := s.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: mustDay("2024-04-01"), Interval: 1, Limit: 10})
		if err != nil || p.Total != 0 {
			t.Errorf("rows of the failed load are visible: %d %v", p.Total, err)
		}
	})
	t.Run("partitions are monthly", func(t *testing.T) {
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'intraday_bars'::regclass`).Scan(&n); err != nil || n != 2 {
			t.Errorf("partitions %d %v (March, and April from the failed load)", n, err)
		}
	})
}
