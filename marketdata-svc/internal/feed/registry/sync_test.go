package registry_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/registry"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// token is every fake's credential; no log line may hold it.
const token = "s3cr3t-T0KEN-9f8e7d"

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// harness is one provider against its fake, and a fresh store.
type harness struct {
	t        *testing.T
	name     string
	fake     *feedfake.Fake
	store    *testenv.Stores
	cfg      config.Sync
	logs     *logbuf.Buffer
	provider feed.Provider
}

func newHarness(t *testing.T, name string) *harness {
	t.Helper()
	fake := feedfake.New(token)
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	base := map[string]string{"marketstack": srv.URL + "/marketstack/v2", "tiingo": srv.URL,
		"eodhd": srv.URL + "/eodhd", "stooq": srv.URL + "/stooq"}[name]
	p := config.SyncProvider{Token: token, URL: base, RatePerMinute: 60_000, Burst: 100}
	if name == "stooq" {
		p.Token = ""
	}
	cfg := config.Sync{Timeout: 5 * time.Second, Retries: 3, Backoff: 10 * time.Millisecond, MaxBackoff: 2 * time.Second, Concurrency: 2,
		Marketstack: p, Tiingo: p, EODHD: p, Stooq: p}
	h := &harness{t: t, name: name, fake: fake, store: testenv.Store(t), cfg: cfg, logs: &logbuf.Buffer{}}
	h.provider = h.build(cfg)
	t.Cleanup(func() {
		if strings.Contains(h.logs.String(), token) {
			t.Errorf("the token is in a log line:\n%s", h.logs.String())
		}
	})
	return h
}

func (h *harness) build(cfg config.Sync) feed.Provider {
	h.t.Helper()
	p, err := registry.New(h.name, cfg, slog.New(slog.NewJSONHandler(h.logs, nil)), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) run(ctx context.Context, o feed.Options) feed.Report {
	h.t.Helper()
	o.Log = slog.New(slog.NewJSONHandler(h.logs, nil))
	if o.Concurrency == 0 {
		o.Concurrency = 2
	}
	rep, err := feed.Run(ctx, h.provider, h.store.Ingest, o)
	if err != nil {
		h.t.Fatalf("run: %v", err)
	}
	for _, f := range rep.Failed {
		if strings.Contains(f.Reason, token) {
			h.t.Errorf("the token is in a failure: %s", f.Reason)
		}
	}
	if rep.Fatal != nil && strings.Contains(rep.Fatal.Error(), token) {
		h.t.Errorf("the token is in the run's error: %v", rep.Fatal)
	}
	return rep
}

type storedBar struct {
	date                      string
	close, priceFactor, split float64
	dividend                  float64
}

func (h *harness) bars(symbol string) []storedBar {
	h.t.Helper()
	rows, err := h.store.DB().Query(`SELECT date, close, price_factor, split_factor, dividend FROM eod_bars WHERE symbol = $1 ORDER BY date`, symbol)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []storedBar
	for rows.Next() {
		var b storedBar
		var d time.Time
		if err := rows.Scan(&d, &b.close, &b.priceFactor, &b.split, &b.dividend); err != nil {
			h.t.Fatal(err)
		}
		b.date = d.Format(time.DateOnly)
		out = append(out, b)
	}
	return out
}

func (h *harness) version() int64 {
	h.t.Helper()
	var v int64
	if err := h.store.DB().QueryRow(`SELECT version FROM data_version`).Scan(&v); err != nil {
		h.t.Fatal(err)
	}
	return v
}

// week is AAPL's week of 2024-03-04: a 2:1 split on Wednesday, a 1.00
// dividend on Friday.
func week(f *feedfake.Fake) {
	setBars(f, "AAPL", "2024-03-04,99,101,98,100,1000", "2024-03-05,100,103,99,102,1100", "2024-03-06,51,52,49,50,2400",
		"2024-03-07,50,52,50,51,2000", "2024-03-08,50,51,49,50,2100")
	f.SetSplit("AAPL", "2024-03-06", 2)
	f.SetDividend("AAPL", "2024-03-08", 1)
}

// setBars gives symbol the bars "date,open,high,low,close,volume".
func setBars(f *feedfake.Fake, symbol string, rows ...string) {
	for _, r := range rows {
		v := strings.Split(r, ",")
		f.SetBar(symbol, feedfake.Bar{Date: v[0], Open: v[1], High: v[2], Low: v[3], Close: v[4], Volume: v[5]})
	}
}

var providers = []string{"marketstack", "tiingo", "eodhd", "stooq"}

// TestEachProviderSyncs syncs a week with a split and a dividend from each
// provider's fake, beside a symbol the provider does not know: the week is
// stored with the factors computed by hand (CRSP: 1/2 before the split,
// 1 − 1.00/51 before the dividend), the unknown symbol is listed as failed
// with exit code 3, and a second run of the same window stores nothing.
func TestEachProviderSyncs(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, name)
			week(h.fake)
			o := feed.Options{Symbols: []string{"AAPL", "NOPE"}, From: day("2024-03-04"), To: day("2024-03-08")}
			rep := h.run(context.Background(), o)
			if rep.ExitCode() != feed.ExitPartial || len(rep.Failed) != 1 || rep.Failed[0].Symbol != "NOPE" ||
				rep.Failed[0].Reason != feed.ErrUnknownSymbol.Error() {
				t.Fatalf("exit %d, failed %+v, fatal %v; want 3 with NOPE unknown", rep.ExitCode(), rep.Failed, rep.Fatal)
			}
			if rep.Stored != 5 || rep.Synced != 1 {
				t.Fatalf("stored %d bars of %d symbols, want 5 of 1", rep.Stored, rep.Synced)
			}
			got := h.bars("AAPL")
			div := 1 - 1.0/51
			want := []float64{0.5 * div, 0.5 * div, div, div, 1}
			if name == "stooq" { // Stooq's download carries no corporate actions
				want = []float64{1, 1, 1, 1, 1}
			}
			for i, b := range got {
				if math.Abs(b.priceFactor-want[i]) > 1e-12 {
					t.Errorf("%s price factor %v, want %v", b.date, b.priceFactor, want[i])
				}
			}
			if len(got) != 5 {
				t.Fatalf("%d bars stored, want 5", len(got))
			}
			v := h.version()
			again := h.run(context.Background(), feed.Options{Symbols: []string{"AAPL"}, From: day("2024-03-04"), To: day("2024-03-08"), Refetch: true})
			if again.Stored != 0 || h.version() != v || again.ExitCode() != feed.ExitOK {
				t.Fatalf("re-run stored %d, version %d -> %d, exit %d; want nothing stored, version kept, exit 0", again.Stored, v, h.version(), again.ExitCode())
			}
		})
	}
}

// TestBadRecordsAreReportedNotStored: a malformed number, a negative
// price, a high below its low and a bar outside the window asked for are
// each refused with provider, symbol, date and reason; the good bars of
// the same answer are stored.
func TestBadRecordsAreReportedNotStored(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, name)
			h.fake.OutOfWindow = true
			setBars(h.fake, "MSFT", "2024-03-04,10,11,9,10,100", "2024-03-05,1O.5,11,9,10,100", "2024-03-06,10,11,9,-10,100",
				"2024-03-07,10,8,9,10,100", "2024-03-08,10,11,9,10,100", "2024-02-01,10,11,9,10,100")
			rep := h.run(context.Background(), feed.Options{Symbols: []string{"MSFT"}, From: day("2024-03-04"), To: day("2024-03-08")})
			var reasons []string
			for _, r := range rep.Rejects {
				if r.Provider != name || r.Symbol != "MSFT" {
					t.Errorf("reject %+v: want provider %s, symbol MSFT", r, name)
				}
				reasons = append(reasons, r.Date[:10]+": "+r.Reason)
			}
			slices.Sort(reasons)
			want := []string{
				"2024-02-01: date 2024-02-01 outside the requested window 2024-03-04..2024-03-08",
				`2024-03-05: malformed open "1O.5"`,
				"2024-03-06: negative close -10",
				"2024-03-07: high 8 is below low 9",
			}
			if !slices.Equal(reasons, want) {
				t.Errorf("rejects:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
			}
			if got := h.bars("MSFT"); len(got) != 2 || got[0].date != "2024-03-04" || got[1].date != "2024-03-08" {
				t.Errorf("stored %+v, want the two good bars", got)
			}
			for _, r := range rep.Rejects {
				if reason, _ := json.Marshal(r.Reason); !strings.Contains(h.logs.String(), `"reason":`+string(reason)) {
					t.Errorf("reject %q not logged", r.Reason)
				}
			}
		})
	}
}

// TestRetries: a 429 with Retry-After: 1 is waited out (the backoff is
// 10 ms, so only the header explains the second), a 500 is retried, and
// both end in success; a symbol failing past the retries fails alone.
func TestRetries(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, name)
			week(h.fake)
			h.fake.SetBar("IBM", feedfake.Bar{Date: "2024-03-04", Open: "1", High: "2", Low: "1", Close: "2", Volume: "5"})
			path := map[string]string{"marketstack": "/eod", "tiingo": "/aapl/prices", "eodhd": "/api/eod/AAPL", "stooq": "/q/d/l"}[name]
			h.fake.Fail(path, 429, "1", 1)
			h.fake.Fail(path, 500, "", 1)
			start := time.Now()
			rep := h.run(context.Background(), feed.Options{Symbols: []string{"AAPL"}, From: day("2024-03-04"), To: day("2024-03-08")})
			if rep.ExitCode() != feed.ExitOK || rep.Stored != 5 {
				t.Fatalf("exit %d, stored %d, failed %+v; want 0 and 5", rep.ExitCode(), rep.Stored, rep.Failed)
			}
			if el := time.Since(start); el < time.Second {
				t.Errorf("done in %s: Retry-After 1 was not honoured", el)
			}
			if !strings.Contains(h.logs.String(), `"status":429`) || !strings.Contains(h.logs.String(), `"status":500`) {
				t.Errorf("retries not logged:\n%s", h.logs.String())
			}
			// Past the retries, the symbol fails and the other is stored.
			failPath := map[string]string{"marketstack": "/eod", "tiingo": "/ibm/prices", "eodhd": "/api/eod/IBM", "stooq": "/q/d/l"}[name]
			h.fake.Fail(failPath, 503, "", 4)
			syms := []string{"IBM", "AAPL"}
			if name == "stooq" || name == "marketstack" { // one path for all symbols: ask IBM alone
				syms = []string{"IBM"}
			}
			rep = h.run(context.Background(), feed.Options{Symbols: syms, From: day("2024-03-04"), To: day("2024-03-08"), Refetch: true, Concurrency: 1})
			if len(rep.Failed) != 1 || rep.Failed[0].Symbol != "IBM" || !strings.Contains(rep.Failed[0].Reason, "status 503") {
				t.Fatalf("failed %+v, want IBM with status 503", rep.Failed)
			}
		})
	}
}

// TestBadTokenStopsTheRun: a refused credential ends the run at once with
// exit code 1, and neither the logs nor the error hold the token.
func TestBadTokenStopsTheRun(t *testing.T) {
	for _, name := range providers[:3] {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, name)
			week(h.fake)
			h.fake.Token = "another-token"
			rep := h.run(context.Background(), feed.Options{Symbols: []string{"AAPL", "MSFT", "IBM"}, From: day("2024-03-04"), To: day("2024-03-08")})
			if rep.ExitCode() != feed.ExitNothing || rep.Fatal == nil || !strings.Contains(rep.Fatal.Error(), "credential refused") {
				t.Fatalf("exit %d, fatal %v; want 1, credential refused", rep.ExitCode(), rep.Fatal)
			}
			if n := h.fake.Requests(); n > 2 {
				t.Errorf("%d requests after a refused credential, want the run stopped", n)
			}
		})
	}
}

// TestRestatedBar: a bar the provider restates after it was synced
// replaces the stored one on the next run that covers it (--lookback), the
// factors that depend on it are recomputed (the dividend's 1 − 1/51
// becomes 1 − 1/40 when Thursday's close is restated to 40), and the data
// version moves so caches drop the old answers.
func TestRestatedBar(t *testing.T) {
	for _, name := range providers[:3] {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, name)
			week(h.fake)
			h.run(context.Background(), feed.Options{Symbols: []string{"AAPL"}, From: day("2024-03-04"), To: day("2024-03-08")})
			v := h.version()
			h.fake.SetBar("AAPL", feedfake.Bar{Date: "2024-03-07", Open: "41", High: "42", Low: "39", Close: "40", Volume: "2000"})
			rep := h.run(context.Background(), feed.Options{Symbols: []string{"AAPL"}, To: day("2024-03-08"), Lookback: 3})
			if rep.Stored != 1 {
				t.Fatalf("stored %d bars, want the restated one", rep.Stored)
			}
			got := h.bars("AAPL")
			if got[3].close != 40 || math.Abs(got[3].priceFactor-(1-1.0/40)) > 1e-12 || math.Abs(got[0].priceFactor-0.5*(1-1.0/40)) > 1e-12 {
				t.Errorf("after the restatement: %+v", got)
			}
			if h.version() <= v {
				t.Errorf("data version %d -> %d, want it raised", v, h.version())
			}
		})
	}
}

// TestKilledRunResumes: a backfill cancelled after its second symbol's
// load resumes, with the same command, from where it stopped: every
// symbol ends with its whole window, and the symbols already done are not
// asked again.
func TestKilledRunResumes(t *testing.T) {
	h := newHarness(t, "tiingo")
	h.fake.Synthetic = 8
	var syms []string
	for i := range 8 {
		syms = append(syms, feedfake.SyntheticSymbol(i))
	}
	o := feed.Options{Symbols: syms, From: day("2023-01-02"), To: day("2023-12-29"), BatchRows: 1, Concurrency: 1}
	ctx, cancel := context.WithCancel(context.Background())
	loads := 0
	o.Publish = func(context.Context, int64) error {
		if loads++; loads == 2 {
			cancel()
		}
		return nil
	}
	first := h.run(ctx, o)
	if first.Synced >= 8 || first.Synced < 2 {
		t.Fatalf("the killed run synced %d symbols, want it stopped after 2", first.Synced)
	}
	before := h.fake.Requests()
	o.Publish = nil
	second := h.run(context.Background(), o)
	if second.ExitCode() != feed.ExitOK {
		t.Fatalf("resumed run: exit %d, failed %+v, fatal %v", second.ExitCode(), second.Failed, second.Fatal)
	}
	if asked := h.fake.Requests() - before; asked != 8-first.Synced {
		t.Errorf("the resumed run asked %d symbols, want the %d left", asked, 8-first.Synced)
	}
	for _, s := range syms {
		if got := h.bars(s); len(got) != 260 || got[0].date != "2023-01-02" || got[len(got)-1].date != "2023-12-29" {
			t.Errorf("%s: %d bars, want the 260 weekdays of 2023", s, len(got))
		}
	}
}

// TestMarketstackPages: ten years of one symbol come in pages of 1000
// (limit=1000, offset), all stored.
func TestMarketstackPages(t *testing.T) {
	h := newHarness(t, "marketstack")
	h.fake.Synthetic = 1
	rep := h.run(context.Background(), feed.Options{Symbols: []string{"S00000"}, From: day("2014-01-01"), To: day("2023-12-31")})
	if rep.ExitCode() != feed.ExitOK || rep.Stored != 2608 {
		t.Fatalf("exit %d, stored %d, want 2608 weekdays", rep.ExitCode(), rep.Stored)
	}
	// 3 pages of /eod, 1 of /splits, 1 of /dividends.
	if n := h.fake.Requests(); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
}

// TestEODHDBulkDay: --exchange XNAS takes the whole day in one call (and
// one each for its splits and dividends), streamed into one load.
func TestEODHDBulkDay(t *testing.T) {
	h := newHarness(t, "eodhd")
	h.fake.Synthetic = 3000
	week(h.fake)
	if _, err := h.store.Ingest.Apply(context.Background(), ingest.Load{Exchanges: []marketdata.Exchange{{MIC: "XNAS", Name: "NASDAQ", Timezone: "America/New_York"}}}); err != nil {
		t.Fatal(err)
	}
	rep := h.run(context.Background(), feed.Options{Exchange: "XNAS", From: day("2024-03-08"), To: day("2024-03-08")})
	if rep.ExitCode() != feed.ExitOK || rep.Stored != 3001 || rep.Synced != 3001 {
		t.Fatalf("exit %d, stored %d of %d symbols, failed %+v", rep.ExitCode(), rep.Stored, rep.Synced, rep.Failed)
	}
	if n := h.fake.Requests(); n != 3 {
		t.Errorf("%d requests, want 3 (bars, splits, dividends)", n)
	}
	if got := h.bars("AAPL"); len(got) != 1 || got[0].dividend != 1 {
		t.Errorf("AAPL %+v, want the day with its dividend", got)
	}
	again := h.run(context.Background(), feed.Options{Exchange: "XNAS", To: day("2024-03-08")})
	if again.Stored != 0 || h.fake.Requests() != 3 {
		t.Errorf("the next run stored %d and asked %d, want nothing (the day is synced)", again.Stored, h.fake.Requests()-3)
	}
}

// TestTiingoBackfillStartsAtTheFirstDay: a symbol with nothing stored and
// no --from is asked from the first day its Tiingo metadata gives
// (/tiingo/daily/{ticker}), not from --backfill-from: one request for
// metadata, one for prices, and the six weekdays of 2004-01-02..09 stored;
// a symbol Tiingo does not know fails at the metadata.
func TestTiingoBackfillStartsAtTheFirstDay(t *testing.T) {
	h := newHarness(t, "tiingo")
	h.fake.Synthetic = 1
	rep := h.run(context.Background(), feed.Options{Symbols: []string{"S00000", "NOPE"}, BackfillFrom: day("2000-01-03"), To: day("2004-01-09")})
	if rep.Stored != 6 || len(rep.Failed) != 1 || rep.Failed[0].Symbol != "NOPE" {
		t.Fatalf("stored %d, failed %+v; want 6 bars and NOPE unknown", rep.Stored, rep.Failed)
	}
	if got := h.bars("S00000"); got[0].date != feedfake.SyntheticStart {
		t.Errorf("first bar %s, want %s", got[0].date, feedfake.SyntheticStart)
	}
	if n := h.fake.Requests(); n != 3 {
		t.Errorf("%d requests, want 3 (two metadata, one prices)", n)
	}
}
