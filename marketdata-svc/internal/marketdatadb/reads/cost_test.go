package reads_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// costBudget is the most database work one request of
// TestEveryRouteCostIsBounded may do: rows its scans read (readCost.rows)
// and buffers it touches (readCost.buffers).
type costBudget struct{ rows, buffers int64 }

// intradayBudget is the work of an intraday request of symbols at
// interval: at most every minute of the longest range the interval may
// span (MaxSpan), of each symbol, whatever its limit, offset or range
// (the data holds at most 390 of the 1440 minutes of a weekday, none of a
// weekend); and no more buffers than that, a page holding many minutes.
// Reading the whole stored history, as limit=1 and offsets past the end
// once did, reads about 780,000 minutes.
func intradayBudget(symbols, interval int) costBudget {
	minutes := int64(symbols) * int64(marketdata.MaxSpan(interval)/time.Minute)
	return costBudget{rows: minutes, buffers: minutes}
}

// eodBudget is the work of an EOD request of symbols whose range holds
// inRange bars and whose page walks at most walk bars of each symbol
// (limit plus the rest of the offset within the page's first date, under
// one date's bars; 1 for latest). Its counts read the range's bars from
// the primary key or the table, at least 50 to a page: the total's count
// and a deep page's count by date. The walk fetches its bars by the key,
// two pages each at most. The rows allow a third read of the range as a
// margin, since rows alone do not tell a deep page that walks every bar
// up to its offset, as it once did, from one that counts them: the
// buffers do, a full walk touching a page per bar and spilling its sort
// to disk.
func eodBudget(symbols, walk int, inRange int64) costBudget {
	walked := int64(symbols) * int64(walk)
	return costBudget{rows: 3*inRange + walked, buffers: 3*inRange/50 + 2*walked}
}

// loadCostData loads the bench's data size: two New York symbols (C000,
// C001) with their regular sessions' minutes on each of 1000 weekdays from
// 2022-01-03 (about 780,000 minutes), loaded as `generate --intraday --days
// 1000` of two tickers loads them (the generator's minutes through the
// importer, which makes the monthly partitions), and 100 XNAS symbols
// (C000..C099) with 30 years of weekday EOD bars each (about 780,000
// bars), written by SQL for speed.
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
	var days []generate.SessionDay
	for _, sym := range []string{"C000", "C001"} {
		for d, n := testenv.Day("2022-01-03"), 0; n < 1000; d = d.AddDate(0, 0, 1) {
			if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				continue
			}
			days = append(days, generate.SessionDay{Day: generate.DayBar{Symbol: sym, Date: d, Open: 100, High: 101, Low: 99, Close: 100, Volume: 3900},
				Session: marketdata.SessionOf("XNAS"), Zone: testenv.NewYork()})
			n++
		}
	}
	minutes := func() (ingest.IntradaySource, error) { return generate.NewIntradaySource(1, days), nil }
	if _, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: minutes}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
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
// route over data of the bench's size and holds the database work of each
// within its budget: the work of a request must be bounded by its page and
// the range bounds, not by the history stored, whatever limit, offset or
// range it names. The work is counted, not timed: each statement the read
// ran (recorded by a tracer on its pool) runs again under EXPLAIN
// (ANALYZE, BUFFERS), and its scans' rows and buffers are summed. The
// time is logged only: speed is the bench's to measure.
func TestEveryRouteCostIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	cfg := testenv.Config(testenv.Postgres(t))
	cfg.StatementTimeout = time.Minute // let today's cost show, not the timeout
	s := testenv.StoreWith(t, cfg)
	loadCostData(t, s)
	ctx := context.Background()
	statements := &statementLog{}
	traced, err := marketdatadb.OpenTraced(ctx, cfg, statements)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traced.Close() })
	r := reads.New(traced.DB())
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	within := func(name string, budget costBudget, read func() (bars int, total int64, err error)) {
		t.Run(name, func(t *testing.T) {
			statements.take()
			start := time.Now()
			bars, total, err := read()
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := explainCost(ctx, conn, statements.take())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (budget %d rows, %d buffers); %d bars of %d in %v", cost, budget.rows, budget.buffers, bars, total, took)
			if cost.rows() > budget.rows || cost.buffers > budget.buffers {
				t.Errorf("%d rows read and %d buffers touched, want at most %d and %d", cost.rows(), cost.buffers, budget.rows, budget.buffers)
			}
		})
	}
	two := []string{"C000", "C001"}
	var hundred []string
	for i := range 100 {
		hundred = append(hundred, fmt.Sprintf("C%03d", i))
	}
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
		within(name, intradayBudget(len(q.Symbols), q.Interval), func() (int, int64, error) {
			page, err := r.Intraday(ctx, q)
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
	// Every range above holds every bar stored.
	inRange := int64(len(weekdays) * len(hundred))
	for name, q := range eod {
		walk := q.Limit + len(q.Symbols)
		if q.Latest {
			walk = 1
		}
		within(name, eodBudget(len(q.Symbols), walk, inRange), func() (int, int64, error) {
			page, err := r.EOD(ctx, q)
			return len(page.Bars), page.Total, err
		})
	}
}
