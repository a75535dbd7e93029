package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Staleness is how long after an import marketdata-svc still answered
// the cache-hit query with the older data, measured from outside: the
// import changes one bar of the hit page, then the harness asks for the
// page until the new value shows. Three ways an import reaches the
// service are timed, each Trials times:
//   - pubsub: the import publishes the new version (Redis SET and
//     PUBLISH in one script), as always;
//   - lost_message: the import publishes nothing and the harness sets the
//     version in Redis without an announcement, as when a pub/sub message
//     is lost: only the poll (MARKETDATA_DATA_VERSION_POLL) can see it;
//   - failed_publish: the import publishes nothing at all, as when Redis
//     is unreachable right after its commit: only the instance's periodic
//     check of PostgreSQL's version can see it.
type Staleness struct {
	Trials             int       `json:"trials"`
	PubSubMS           []float64 `json:"pubsub_ms"`
	LostMessageMS      []float64 `json:"lost_message_ms"`
	FailedPublishMS    []float64 `json:"failed_publish_ms"`
	BoundMS            float64   `json:"bound_ms"`
	FailedPublishBound float64   `json:"failed_publish_bound_ms"`
	Status             string    `json:"status"`
}

// stalenessTrials is how often each way is timed.
const stalenessTrials = 5

// runStaleness times the three ways on the running marketdata-svc. It
// changes the volume of one bar of the hit page and puts it back at the
// end, so the dataset stays as it was.
func (b *bench) runStaleness(ctx context.Context) error {
	q := b.hitQuery()
	if q == "" {
		return nil
	}
	b.logf("workload staleness")
	body, err := httpCall(ctx, "GET", b.mdURL(q), "", nil)
	if err != nil {
		return err
	}
	var page struct {
		Data []struct {
			Symbol string  `json:"symbol"`
			Date   string  `json:"date"`
			Open   float64 `json:"open"`
			High   float64 `json:"high"`
			Low    float64 `json:"low"`
			Close  float64 `json:"close"`
			Volume float64 `json:"volume"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Data) == 0 {
		return fmt.Errorf("hit page: %v (%d bars)", err, len(page.Data))
	}
	bar := page.Data[0]
	original := int64(bar.Volume)
	file := filepath.Join(b.cfg.Out, "staleness.csv")
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	// importVolume imports bar with volume v; with publish false the
	// import runs without Redis and announces nothing.
	importVolume := func(v int64, publish bool) error {
		csv := fmt.Sprintf("Symbol,Date,Open,High,Low,Close,Volume\n%s,%s,%s,%s,%s,%s,%d\n",
			bar.Symbol, bar.Date[:10], num(bar.Open), num(bar.High), num(bar.Low), num(bar.Close), v)
		if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
			return err
		}
		env := b.marketdataEnv(marketdataDB)
		if !publish {
			env["MARKETDATA_REDIS_URL"] = ""
		}
		_, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"import", file}, env: env, quiet: true})
		return err
	}
	// seen waits until the page shows volume v and returns how long that
	// took from start.
	seen := func(v int64, start time.Time) (time.Duration, error) {
		want := `"volume":` + strconv.FormatInt(v, 10)
		for {
			body, err := httpCall(ctx, "GET", b.mdURL(q), "", nil)
			if err != nil {
				return 0, err
			}
			if i := strings.Index(string(body), want); i >= 0 && (body[i+len(want)] == ',' || body[i+len(want)] == '}') {
				return time.Since(start), nil
			}
			if time.Since(start) > time.Minute {
				return 0, fmt.Errorf("volume %d not served a minute after the import", v)
			}
			time.Sleep(time.Millisecond)
		}
	}
	res := &Staleness{Trials: stalenessTrials, BoundMS: 2 * b.pollMS(), FailedPublishBound: 20*b.pollMS() + b.pollMS()}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	v := original
	for range stalenessTrials {
		v++
		if err := importVolume(v, true); err != nil {
			return err
		}
		d, err := seen(v, time.Now())
		if err != nil {
			return fmt.Errorf("pubsub: %w", err)
		}
		res.PubSubMS = append(res.PubSubMS, ms(d))

		v++
		if err := importVolume(v, false); err != nil {
			return err
		}
		version, err := b.db.value(ctx, marketdataDB, "SELECT version FROM data_version")
		if err != nil {
			return err
		}
		if _, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "SET", "marketdata:data_version", version}, quiet: true}); err != nil {
			return err
		}
		if d, err = seen(v, time.Now()); err != nil {
			return fmt.Errorf("lost message: %w", err)
		}
		res.LostMessageMS = append(res.LostMessageMS, ms(d))

		v++
		if err := importVolume(v, false); err != nil {
			return err
		}
		if d, err = seen(v, time.Now()); err != nil {
			return fmt.Errorf("failed publish: %w", err)
		}
		res.FailedPublishMS = append(res.FailedPublishMS, ms(d))
	}
	if err := importVolume(original, true); err != nil {
		return err
	}
	res.Status = "pass"
	if slices.Max(res.PubSubMS) > res.BoundMS || slices.Max(res.LostMessageMS) > res.BoundMS || slices.Max(res.FailedPublishMS) > res.FailedPublishBound {
		res.Status = "MISS"
	}
	b.res.Staleness = res
	return nil
}

// pollMS is marketdata-svc's MARKETDATA_DATA_VERSION_POLL in this run, in
// milliseconds (the service's default when not set).
func (b *bench) pollMS() float64 {
	if v, ok := os.LookupEnv("MARKETDATA_DATA_VERSION_POLL"); ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return float64(d.Milliseconds())
		}
	}
	return 250
}

// renderStaleness writes the staleness section of BENCHMARKS.md: the
// design of the two promises a cache hit rests on (limits across
// replicas, no older data after an import) and the measured bound.
func renderStaleness(w func(string, ...any), st *Staleness) {
	ms := func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strings.Join(parts, ", ")
	}
	w("### A cache hit without a network call: leased limits and the staleness bound\n\n")
	w("A marketdata cache hit makes no network call: the page comes from process memory under the data version held in memory, and the key's rate and quota are spent from a lease held in memory.\n\n")
	w("**Leased limits** (`marketdata-svc/internal/ratelimit/lease.go`, `MARKETDATA_RATELIMIT_MODE=lease`, the default; `exact` keeps one Redis script per request). Each replica leases a batch of tokens per key from Redis in one Lua script that reserves them against both limits at once: the GCRA rate state moves forward by n emissions and the month's usage counter by n, and Redis grants n = min(size, what the rate allows now, quota − counter, max(1, (quota − counter)/16)), so the leases of all replicas together never exceed what is left and no number of replicas can spend more than the quota. The size asked for is clamp(min(rate/10, quota/100), 1, 1000): keys under 20/s or 200 a month lease one token at a time, which is exact, and so are the last 16 tokens of any quota. A lease is refilled in the background at half spent; unspent tokens go back after 500 ms idle, with the next lease or a 250 ms sweep, and all of them at graceful shutdown. A crashed replica's unspent tokens stay counted until the month ends (at most 1.5 leases per key, 1.5%% of a quota), because giving back tokens that may have been served could let a key exceed its quota. Shortfall near the end of a window: up to (replicas − 1) × 1.5 × size tokens a key cannot spend for under a second while other replicas hold them, e.g. 30 of a quota of 1,000 with three replicas. The three-replica test (`marketdata-svc/cmd/marketdata-svc/replicas_test.go`, in `make test`) serves exactly Q of a quota Q across three replicas, also while one restarts. Measured (`BenchmarkAllow`, real Redis, 16 callers): exact mode 69–140 µs and ~2,000 Redis round trips per 10,000 requests; lease mode 7.5–8.8 µs and 116–199 round trips per 10,000.\n\n")
	w("**The data version** (`marketdata-svc/internal/dataversion`). An import bumps the version in its transaction and, after the commit, raises it in Redis and announces it on a pub/sub channel in one script. Every instance keeps the version in memory: it re-reads it on an announcement, every `MARKETDATA_DATA_VERSION_POLL` (250 ms) in case an announcement is lost, and every 20th read also checks PostgreSQL's version, in case the import could not publish at all. A read slower than the poll interval makes the version unknown, which sends requests to the database (slow, never stale). Bounds: %.0f ms after an import's commit with or without the announcement; %.0f ms when the import could not publish.\n\n", st.BoundMS, st.FailedPublishBound)
	w("Measured here, from outside, on the running marketdata-svc: an import changes one bar of the cache-hit page, then the harness asks for the page every millisecond until the new value shows (%d trials each):\n\n", st.Trials)
	w("| how the import reached the service | ms until the new data was served | bound |\n|---|---|---:|\n")
	w("| announced (pub/sub) | %s | %.0f ms |\n", ms(st.PubSubMS), st.BoundMS)
	w("| announcement lost: the version set in Redis silently | %s | %.0f ms |\n", ms(st.LostMessageMS), st.BoundMS)
	w("| publish failed: the import ran without Redis | %s | %.0f ms |\n\n", ms(st.FailedPublishMS), st.FailedPublishBound)
}
