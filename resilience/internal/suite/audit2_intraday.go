package suite

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
)

// AuditUnboundedQueries reproduces an outside audit's finding: over 778k
// stored minutes of two symbols, an intraday request with interval=1min
// and limit=1 aggregated the whole history (3.9-4.3 s), an offset past the
// end twice (8.3 s), and a key limited to 5 requests a second, with
// distinct offsets so that none was a cache hit, got 99 of 99 answers 503
// while another tenant's uncached EOD p90 went from 3 ms to 1.3 s (6.5 s
// at most). The most expensive request of each intraday route must stay
// under a second, and the 5 req/s key must leave the other tenant's EOD
// alone. (The Go test reads.TestEveryRouteCostIsBounded bounds the same
// requests on the store, EOD routes included, by the rows and buffers
// their statements read rather than by time.)
func AuditUnboundedQueries(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Audit: intraday requests whose cost limit does not bound, over 780,000 minutes of two symbols (marketdata-svc)")
	// 390 regular-session minutes on each of 1000 weekdays, two symbols,
	// as `generate --intraday --days 1000` of two tickers.
	seed := []string{
		`INSERT INTO tickers (symbol, name, exchange_mic, has_intraday) VALUES ('AUDITA', 'Audit A', 'XNAS', true), ('AUDITB', 'Audit B', 'XNAS', true) ON CONFLICT DO NOTHING`,
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
FROM d, unnest(ARRAY['AUDITA', 'AUDITB']) AS s, generate_series(0, 389) AS m
ON CONFLICT DO NOTHING`,
		`VACUUM ANALYZE intraday_bars`,
	}
	for _, stmt := range seed {
		if _, err := e.Stack.PSQL(ctx, e.MarketDB, stmt); err != nil {
			s.Check("setup", false, "seed minutes: %v", err)
			return
		}
	}

	// The most expensive request of each route, each alone, three times
	// with a distinct offset or limit so that none is a cache hit.
	routes := []string{
		"/v1/intraday?symbols=AUDITA,AUDITB&interval=1min&limit=1&offset=%d",
		"/v1/intraday?symbols=AUDITA,AUDITB&interval=1min&limit=1&offset=%d00000000",
		"/v1/intraday?symbols=AUDITA,AUDITB&interval=1hour&date_from=2022-01-03&limit=1000&offset=%d",
		"/v1/intraday?symbols=AUDITA,AUDITB&interval=24hour&after_hours=true&date_from=2025-06-01&date_to=2025-08-29&limit=%d",
		"/v1/intraday/latest?symbols=AUDITA,AUDITB&interval=1min&limit=%d",
		"/v2/tickers/AUDITA/intraday?interval=1min&limit=1&offset=%d",
		"/v1/exchanges/XNAS/intraday?symbols=AUDITA,AUDITB&interval=5min&limit=1&offset=%d",
	}
	var slowest time.Duration
	var failed []string
	var medians []string
	for _, route := range routes {
		var durs []time.Duration
		for i := range 3 {
			path := fmt.Sprintf(route, i+1)
			resp, err := e.Do(e.MarketRequest(http.MethodGet, path, e.MarketKey))
			if err != nil || resp.Status != http.StatusOK {
				failed = append(failed, fmt.Sprintf("%s: %d %v", path, resp.Status, err))
				continue
			}
			durs = append(durs, resp.Dur)
		}
		if len(durs) == 0 {
			continue
		}
		slices.Sort(durs)
		slowest = max(slowest, durs[len(durs)-1])
		medians = append(medians, fmt.Sprintf("%s %s", fmt.Sprintf(route, 1), durs[len(durs)/2].Round(100*time.Microsecond)))
	}
	s.Check("every expensive intraday request is answered 200", len(failed) == 0, "%d failed: %s", len(failed), strings.Join(failed, "; "))
	// Before the bounds these took 4 to 8 s.
	s.Check("no intraday request takes a second", slowest < time.Second, "slowest %s; medians: %s",
		slowest.Round(100*time.Microsecond), strings.Join(medians, ", "))

	// A range longer than its interval's span is refused, not read.
	resp, err := e.Do(e.MarketRequest(http.MethodGet, "/v1/intraday?symbols=AUDITA&interval=1min&date_from=2022-01-03&date_to=2025-12-31", e.MarketKey))
	s.Check("a range longer than the interval's span is a 422", err == nil && resp.Status == http.StatusUnprocessableEntity &&
		strings.Contains(string(resp.Body), "invalid_date_range"), "%d %v %.200s", resp.Status, err, resp.Body)

	// A key limited to 5 requests a second sends expensive intraday
	// requests, each with its own offset, while another tenant's uncached
	// EOD is measured.
	slow, err := e.Market.CreateKey(ctx, "--account", "audit-intraday", "--rate-per-second", "5")
	if err != nil {
		s.Check("setup", false, "create key: %v", err)
		return
	}
	e.Secret(slow, "marketdata key audit-intraday")
	// Open loop at the key's own rate, as the audit sent them: requests
	// pile up only if the database cannot keep up.
	const window = 8 * time.Second
	var hammer []load.Result
	var wg sync.WaitGroup
	wg.Go(func() {
		hammer = load.Run(ctx, load.Plan{Rate: 5, Duration: window, Client: load.NewClient(RequestTimeout+5*time.Second, true),
			Build: func(i int) (*http.Request, error) {
				return e.MarketRequest(http.MethodGet, fmt.Sprintf("/v1/intraday?symbols=AUDITA,AUDITB&interval=1min&limit=1&offset=%d", 1000+i), slow), nil
			}})
	})
	results := load.Run(ctx, load.Plan{Rate: 20, Duration: window, Client: load.NewClient(RequestTimeout+2*time.Second, true),
		Build: func(i int) (*http.Request, error) {
			// Distinct pages, so that every request misses the cache.
			return e.MarketRequest(http.MethodGet, fmt.Sprintf("/v1/eod?symbols=GOOG,MSFT&limit=%d&offset=%d", i%50+1, i/50), e.MarketKey), nil
		}})
	wg.Wait()
	hs := load.Summarize(hammer)
	ok200, limited := hs.ByStatus[http.StatusOK], hs.ByStatus[http.StatusTooManyRequests]
	other := hs.Sent - ok200 - limited
	sum := load.Summarize(results)
	durs := make([]time.Duration, 0, len(results))
	for _, r := range results {
		durs = append(durs, r.Duration())
	}
	slices.Sort(durs)
	p90 := time.Duration(0)
	if len(durs) > 0 {
		p90 = durs[len(durs)*9/10]
	}
	okEOD := sum.ByStatus[http.StatusOK]
	s.Sent, s.Failed = sum.Sent+hs.Sent, sum.Sent-okEOD+other
	s.Outcomes = fmt.Sprintf("other tenant's EOD: %s; 5 req/s key: %s", sum.StatusString(), hs.StatusString())
	// Before, 99 of 99 were 503.
	s.Check("the 5 req/s key's requests are answered 200 or 429, never 503", other == 0 && ok200 > 0,
		"%s (p99 %s)", hs.StatusString(), hs.P99Latency.Round(100*time.Microsecond))
	s.Check("another tenant's EOD is all 200", okEOD == sum.Sent && sum.Sent > 0, "%d of %d", okEOD, sum.Sent)
	// Before, its p90 went from 3 ms to 1.3 s.
	s.Check("another tenant's uncached EOD keeps its pace", p90 < 100*time.Millisecond, "p90 %s, max %s",
		p90.Round(100*time.Microsecond), sum.MaxLatency.Round(100*time.Microsecond))
	s.Recovery = fmt.Sprintf("other tenant EOD p90 %s, max %s", p90.Round(100*time.Microsecond), sum.MaxLatency.Round(100*time.Microsecond))
}
