package ingest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestIntradayLoad(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	rows := testenv.Minutes("AAA", "2024-03-08 09:30", 30)
	testenv.SeedIntraday(t, s, rows)
	t.Run("a re-import changes nothing", func(t *testing.T) {
		res, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(rows)})
		if err != nil || res.Changed() || res.BarsChanged != 0 || res.BarsRead != 30 {
			t.Errorf("re-import: %+v %v", res, err)
		}
		tk, err := s.Reads.Ticker(ctx, "AAA")
		if err != nil || !tk.HasIntraday {
			t.Errorf("has_intraday: %+v %v", tk, err)
		}
	})
	t.Run("a changed minute is updated and bumps the version", func(t *testing.T) {
		changed := append([]ingest.IntradayRow(nil), rows...)
		changed[3].Close = 1
		changed[3].Low = 1
		res, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(changed)})
		if err != nil || res.BarsChanged != 1 || !res.Changed() {
			t.Errorf("update: %+v %v", res, err)
		}
	})
	t.Run("minutes after the stored ones are added beside them", func(t *testing.T) {
		next := append(testenv.Minutes("AAA", "2024-03-11 09:30", 10), testenv.Minutes("BBB", "2024-03-11 09:30", 10)...)
		res, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(next)})
		if err != nil || res.BarsRead != 20 || res.BarsChanged != 20 || !res.Changed() {
			t.Errorf("next day: %+v %v", res, err)
		}
		for _, sym := range []string{"AAA", "BBB"} {
			p, err := s.Reads.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{sym}, FromDay: testenv.Day("2024-03-11"), Interval: 1, Limit: 100})
			if err != nil || p.Total != 10 {
				t.Errorf("%s on the next day: %d minutes, %v", sym, p.Total, err)
			}
		}
	})
	t.Run("a load over stored minutes adds only the new ones", func(t *testing.T) {
		over := testenv.Minutes("AAA", "2024-03-08 09:30", 40)[20:] // minutes 20-29 stored, unchanged
		res, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(over)})
		if err != nil || res.BarsRead != 20 || res.BarsChanged != 10 {
			t.Errorf("overlap: %+v %v", res, err)
		}
	})
	t.Run("a duplicate minute rolls the whole load back", func(t *testing.T) {
		more := testenv.Minutes("AAA", "2024-04-01 09:30", 5) // a new month, too
		more = append(more, more[2])
		more[len(more)-1].Line = 99
		_, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(more)})
		var dup *ingest.DuplicateMinutesError
		if !errors.As(err, &dup) || len(dup.Duplicates) != 1 {
			t.Fatalf("err %v", err)
		}
		// The new month takes the plain insert first; its unique
		// violation must still end as the duplicate's report.
		if d := dup.Duplicates[0]; !d.TS.Equal(more[2].TS) || len(d.Lines) != 2 || d.Lines[1] != 99 {
			t.Errorf("duplicate %+v, want %s on lines [%d 99]", d, more[2].TS, more[2].Line)
		}
		p, err := s.Reads.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{"AAA"}, FromDay: testenv.Day("2024-04-01"), Interval: 1, Limit: 10})
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
