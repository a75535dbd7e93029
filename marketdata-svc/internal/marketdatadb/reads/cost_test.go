package reads_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// costBound is the most any one request of TestEveryRouteCostIsBounded may
// take at the bench's data size. Before the bounds the intraday ones took
// 4 to 8 s on the same data; a bounded one takes tens of milliseconds, so
// the margin covers a shared, loaded machine.
const costBound = time.Second

// loadCostData loads the bench's data size, written by SQL for speed: two
// New York symbols (C000, C001) with 390 regular-session minutes on each of
// 1000 weekdays from 2022-01-03 (780,000 minutes, as `generate --intraday
// --days 1000` of two tickers), and 100 XNAS symbols (C000..C099) with 30
// years of weekday EOD bars each (about 780,000 bars).
func loadCostData(t *testing.T, s *testenv.Stores) {
	t.Helper()
	ctx := context.Background()
	var tickers []ingest.TickerRow
	for i := range 100 {
		tickers = append(tickers, ingest.TickerRow{Symbol: fmt.Sprintf("C%03d", i), Name: "Cost", ExchangeMIC: "XNAS"})
	}
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Exchanges: []marketdata.Exchange{testenv.XNAS()}, Tickers: tickers}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DO $$
DECLARE m date;
BEGIN
  FOR m IN SELECT generate_series(date '2022-01-01', date '2026-01-01', interval '1 month')::date LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF intraday_bars FOR VALUES FROM (%L) TO (%L)',
      'intraday_bars_' || to_char(m, 'YYYY_MM'), m::timestamp AT TIME ZONE 'UTC', (m + interval '1 month') AT TIME ZONE 'UTC');
  END LOOP;
END $$`,
		`WITH d AS (
  SELECT d::date AS day FROM generate_series(date '2022-01-03', date '2026-01-01', interval '1 day') AS d
  WHERE extract(isodow FROM d) < 6 ORDER BY 1 LIMIT 1000
)
INSERT INTO intraday_bars (symbol, ts, open, high, low, close, volume)
SELECT s, (d.day + time '09:30') AT TIME ZONE 'America/New_York' + m * interval '1 minute',
       100 + m % 7, 101 + m % 7, 99 + m % 7, 100 + m % 7, 10
FROM d, unnest(ARRAY['C000', 'C001']) AS s, generate_series(0, 389) AS m`,
		`INSERT INTO eod_bars (symbol, date, open, high, low, close, volume)
SELECT s, d::date, 100, 101, 99, 100, 1000
FROM generate_series(0, 99) AS i, LATERAL (SELECT 'C' || lpad(i::text, 3, '0') AS s) AS sym,
     generate_series(date '1996-01-01', date '2025-12-31', interval '1 day') AS d
WHERE extract(isodow FROM d) < 6`,
		`VACUUM ANALYZE intraday_bars, eod_bars`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEveryRouteCostIsBounded sends the most expensive request of each
// route over data of the bench's size and holds each under costBound: the
// database work of a request must be bounded by its page and the range
// bounds, not by the history stored, whatever limit, offset or range it
// names.
func TestEveryRouteCostIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	cfg := testenv.Config(testenv.Postgres(t))
	cfg.StatementTimeout = time.Minute // let today's cost show, not the timeout
	s := testenv.StoreWith(t, cfg)
	loadCostData(t, s)
	two := []string{"C000", "C001"}
	var hundred []string
	for i := range 100 {
		hundred = append(hundred, fmt.Sprintf("C%03d", i))
	}
	ctx := context.Background()
	intraday := map[string]marketdata.IntradayQuery{
		"intraday 1min limit=1, open range":    {Symbols: two, Interval: 1, Sort: marketdata.SortDesc, Limit: 1},
		"intraday 1min offset past the end":    {Symbols: two, Interval: 1, Sort: marketdata.SortDesc, Limit: 1, Offset: 100_000_000},
		"intraday 1min ascending, deep offset": {Symbols: two, Interval: 1, Sort: marketdata.SortAsc, Limit: 1000, Offset: 700_000},
		"intraday 24hour, after hours, the longest range": {Symbols: two, Interval: marketdata.DayMinutes, AfterHours: true,
			FromDay: testenv.Day("2022-01-01"), ToDay: testenv.Day("2025-12-31"), Sort: marketdata.SortDesc, Limit: 1000},
		"intraday 1hour, date_from only": {Symbols: two, Interval: 60, From: time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC),
			Sort: marketdata.SortAsc, Limit: 1000},
		"intraday latest, open range": {Symbols: two, Interval: 1, Latest: true, Sort: marketdata.SortDesc, Limit: 1000},
	}
	for name, q := range intraday {
		withinCostBound(t, name, func() (int, int64, error) {
			page, err := s.Reads.Intraday(ctx, q)
			return len(page.Bars), page.Total, err
		})
	}
	eod := map[string]marketdata.EODQuery{
		"eod 100 symbols on one exchange, deep offset": {Symbols: hundred, Exchange: "XNAS", Sort: marketdata.SortAsc, Limit: 1000, Offset: 700_000},
		"eod 100 symbols, offset past the end":         {Symbols: hundred, Sort: marketdata.SortDesc, Limit: 1000, Offset: 100_000_000},
		"eod 100 symbols, 30 years, one page":          {Symbols: hundred, DateFrom: testenv.Day("1996-01-01"), DateTo: testenv.Day("2025-12-31"), Sort: marketdata.SortDesc, Limit: 1000},
		"eod latest, 100 symbols":                      {Symbols: hundred, Exchange: "XNAS", Latest: true, Sort: marketdata.SortDesc, Limit: 1000},
	}
	// Deep pages start at a date found by counting: they hold the bars
	// the plain walk would, every weekday having one bar of each symbol.
	var weekdays []time.Time
	for d := testenv.Day("1996-01-01"); !d.After(testenv.Day("2025-12-31")); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			weekdays = append(weekdays, d)
		}
	}
	for _, sort := range []marketdata.SortOrder{marketdata.SortAsc, marketdata.SortDesc} {
		for _, offset := range []int{1000, 1050, 700_050, len(weekdays)*100 - 10} {
			page, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: hundred, Sort: sort, Limit: 300, Offset: offset})
			if err != nil {
				t.Fatal(err)
			}
			want := min(300, len(weekdays)*100-offset)
			if len(page.Bars) != want {
				t.Fatalf("%s offset %d: %d bars, want %d", sort, offset, len(page.Bars), want)
			}
			for i, b := range page.Bars {
				n := offset + i
				d := weekdays[n/100]
				if sort == marketdata.SortDesc {
					d = weekdays[len(weekdays)-1-n/100]
				}
				if sym := fmt.Sprintf("C%03d", n%100); b.Symbol != sym || !b.Date.Equal(d) {
					t.Fatalf("%s offset %d, bar %d: %s %s, want %s %s", sort, offset, i, b.Symbol, b.Date, sym, d)
				}
			}
		}
	}
	for name, q := range eod {
		withinCostBound(t, name, func() (int, int64, error) {
			page, err := s.Reads.EOD(ctx, q)
			return len(page.Bars), page.Total, err
		})
	}
}

// withinCostBound runs read, one request of a route, as the subtest name
// and fails it when the read fails or takes longer than costBound.
func withinCostBound(t *testing.T, name string, read func() (bars int, total int64, err error)) {
	t.Run(name, func(t *testing.T) {
		start := time.Now()
		bars, total, err := read()
		if took := time.Since(start); err != nil || took > costBound {
			t.Errorf("took %v (%v), want under %v", took, err, costBound)
		} else {
			t.Logf("%v, %d bars of %d", took, bars, total)
		}
	})
}
