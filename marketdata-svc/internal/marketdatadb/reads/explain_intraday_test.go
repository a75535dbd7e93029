package reads_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// loadMinutes loads symbols × days × 390 regular-session minutes (New
// York) from 2024-01-02 on, weekdays only.
func loadMinutes(t *testing.T, s *testenv.Stores, symbols, days int) int {
	t.Helper()
	var rows []ingest.IntradayRow
	d0 := time.Date(2024, 1, 2, 0, 0, 0, 0, testenv.NewYork())
	n := 0
	for d := 0; n < days; d++ {
		day := d0.AddDate(0, 0, d)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		n++
		for i := range symbols {
			sym := fmt.Sprintf("S%03d", i)
			for m := range 390 {
				c := 100 + float64(m%7)
				rows = append(rows, ingest.IntradayRow{Symbol: sym, TS: day.Add(time.Duration(570+m) * time.Minute),
					Open: c, High: c + 1, Low: c - 1, Close: c, Volume: 10})
			}
		}
	}
	if _, err := s.Ingest.ApplyIntraday(context.Background(), ingest.IntradayLoad{Rows: ingest.IntradayRows(rows)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(context.Background(), "VACUUM ANALYZE intraday_bars"); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// TestIntradayPlanPrunesPartitions checks that the bench's statement for
// one symbol and one day reads one monthly partition through its primary
// key, however many months are stored.
func TestIntradayPlanPrunesPartitions(t *testing.T) {
	s := testenv.Store(t)
	loadMinutes(t, s, 3, 70) // January to April 2024: four partitions
	text := explain(t, s.DB(), "(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+reads.IntradaySQL,
		intradayArgs("S001", "2024-03-08")...)
	if !marchByKey.MatchString(text) || strings.Contains(text, "Seq Scan on intraday_bars") {
		t.Errorf("one day should read the March partition by its key:\n%s", text)
	}
	// Runtime pruning: the other partitions stay in the plan but are
	// never executed.
	for _, line := range strings.Split(text, "\n") {
		for _, m := range []string{"01", "02", "04"} {
			if strings.Contains(line, "intraday_bars_2024_"+m) && !strings.Contains(line, "(never executed)") {
				t.Errorf("partition 2024-%s is read: %s", m, line)
			}
		}
	}
}

// marchByKey is the plan's read of the day's 390 minutes by the March
// partition's key, whatever alias the plan gives the partition.
var marchByKey = regexp.MustCompile(`intraday_bars_2024_03_pkey( on intraday_bars_2024_03 \w+)? \(actual rows=390 `)

// intradayArgs are IntradaySQL's arguments for one New York symbol and
// day, 1hour buckets, regular hours, newest first, 100 a page.
func intradayArgs(sym, day string) []any {
	return []any{[]string{sym}, []string{"America/New_York"}, []int32{570}, []int32{960}, nil, day, nil, day,
		[]string{}, []string{}, []int32{}, 60, false, false, 100, 0, false, "7776000 seconds"}
}

// TestMeasureIntradayPartitioning compares the one-symbol one-day query on
// the partitioned table with the same rows in one unpartitioned table. It
// is a measurement, not a check: it runs only with
// MARKETDATA_MEASURE_INTRADAY_DAYS set (e.g. 250 with 40 symbols: 3.9
// million minutes) and prints the plans and timings for docs/DATA.md.
func TestMeasureIntradayPartitioning(t *testing.T) {
	days, _ := strconv.Atoi(os.Getenv("MARKETDATA_MEASURE_INTRADAY_DAYS"))
	if days == 0 {
		t.Skip("set MARKETDATA_MEASURE_INTRADAY_DAYS to measure")
	}
	// Loading and copying millions of minutes outlasts the tests'
	// statement timeout: this store has none.
	cfg := testenv.Config(testenv.Postgres(t))
	cfg.StatementTimeout = 0
	s := testenv.StoreWith(t, cfg)
	db := s.DB()
	ctx := context.Background()
	n := loadMinutes(t, s, 40, days)
	for _, q := range []string{
		"CREATE TABLE intraday_flat (LIKE intraday_bars INCLUDING ALL)",
		"INSERT INTO intraday_flat SELECT * FROM intraday_bars",
		"VACUUM ANALYZE intraday_flat",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d minutes", n)
	// A weekday well inside the loaded range.
	d := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days*7/5-14)
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, -1)
	}
	day := d.Format(time.DateOnly)
	latest := intradayArgs("S017", day)
	latest[5], latest[7], latest[13] = nil, nil, true // open range, latest
	for _, table := range []string{"intraday_bars", "intraday_flat"} {
		stmt := strings.ReplaceAll(reads.IntradaySQL, "FROM intraday_bars b", "FROM "+table+" b")
		for name, args := range map[string][]any{"one day " + day: intradayArgs("S017", day), "latest, open range": latest} {
			for run := range 3 {
				plan := explain(t, db, "(ANALYZE, BUFFERS) "+stmt, args...)
				if run == 2 {
					t.Logf("%s, %s:\n%s", table, name, plan)
				}
			}
		}
		var size string
		if err := db.QueryRowContext(ctx, "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname LIKE $1 AND c.relkind = 'r'", table+"%").Scan(&size); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", table, size)
	}
}
