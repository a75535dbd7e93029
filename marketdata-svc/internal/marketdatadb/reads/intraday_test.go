package reads_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// bucketText is "HH:MM o h l c v" in New York time, for short expectations.
func bucketText(b marketdata.IntradayBar) string {
	return fmt.Sprintf("%s %g %g %g %g %g", b.Date.In(testenv.NewYork()).Format("01-02 15:04"), b.Open, b.High, b.Low, b.Close, b.Volume)
}

func TestIntradayAggregation(t *testing.T) {
	s := testenv.Store(t)
	var rows []ingest.IntradayRow
	// 2024-03-08 (EST, UTC-5): 09:00-10:59 local, pre-market half hour
	// included, minute 45 (09:45) missing: a gap inside a bucket; and no
	// bars at all 10:00-10:29 (minutes 60..89): a gap of whole buckets.
	gap := []int{45}
	for i := 60; i < 90; i++ {
		gap = append(gap, i)
	}
	rows = append(rows, testenv.Minutes("AAA", "2024-03-08 09:00", 120, gap...)...)
	// 2024-03-11 (EDT, UTC-4, after the change on the 10th): 09:30-10:29.
	rows = append(rows, testenv.Minutes("AAA", "2024-03-11 09:30", 60)...)
	// 2024-11-29, the day after Thanksgiving, closes at 13:00: 12:30-13:29,
	// the half hour after the close is after hours.
	rows = append(rows, testenv.Minutes("AAA", "2024-11-29 12:30", 60)...)
	// 2024-12-02, a full day: 15:30-16:29, the last half hour after hours.
	rows = append(rows, testenv.Minutes("AAA", "2024-12-02 15:30", 60)...)
	testenv.SeedIntraday(t, s, rows)

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
			p, err := s.Reads.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: testenv.Day(c.from), ToDay: testenv.Day(c.to),
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
		p, err := s.Reads.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: testenv.Day("2024-03-08"), ToDay: testenv.Day("2024-03-11"),
			Interval: 60, Sort: marketdata.SortAsc, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Bars) != 3 || p.Bars[0].Date.Format(time.RFC3339) != "2024-03-08T14:30:00Z" || p.Bars[2].Date.Format(time.RFC3339) != "2024-03-11T13:30:00Z" {
			t.Errorf("bars %+v", p.Bars)
		}
	})

	t.Run("1min is the stored bars, paged without gaps or repeats", func(t *testing.T) {
		q := marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: testenv.Day("2024-03-08"), ToDay: testenv.Day("2024-03-08"), Interval: 1, AfterHours: true, Sort: marketdata.SortDesc, Limit: 1000}
		full, err := s.Reads.Intraday(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if full.Total != 89 || len(full.Bars) != 89 {
			t.Fatalf("total %d", full.Total)
		}
		var joined []marketdata.IntradayBar
		for off := 0; off < 100; off += 7 {
			q.Limit, q.Offset = 7, off
			p, err := s.Reads.Intraday(context.Background(), q)
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
		p, err := s.Reads.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA"}, From: from, To: to, Interval: 1, Sort: marketdata.SortAsc, Limit: 100})
		if err != nil || p.Total != 5 {
			t.Errorf("inclusive instants: %d %v", p.Total, err)
		}
		p, err = s.Reads.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"AAA", "BBB"}, Latest: true, Interval: 60, Sort: marketdata.SortDesc, Limit: 100})
		if err != nil || p.Total != 1 || len(p.Bars) != 1 || bucketText(p.Bars[0]) != "12-02 15:30 100 130 99 129.5 "+fmt.Sprint(sumVol(0, 30)) {
			t.Errorf("latest: %+v %v", p, err)
		}
		if _, err := s.Reads.Intraday(context.Background(), marketdata.IntradayQuery{Symbols: []string{"NOPE"}, Interval: 60}); !errors.Is(err, marketdata.ErrNoValidSymbols) {
			t.Errorf("unknown symbols: %v", err)
		}
	})
}

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
