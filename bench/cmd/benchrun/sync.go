package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const syncDB = "bench_sync"

// Sync workloads: `marketdata-svc sync` end to end (fetch, parse, store,
// factors, version publish) from the providers' fake (providerfake, which
// computes its synthetic bars on the fly; a bulk day is rendered before
// the measured run, see syncWorkload.warm), each
// beside COPY of the very rows it stored into an empty table of
// eod_bars' shape.
const (
	// syncUniverseSymbols is a full universe's trading day.
	syncUniverseSymbols = 50_000
	// syncBackfillSymbols x 10 years is the backfill.
	syncBackfillSymbols = 100
	// syncUniverseSecondsBound and syncMaxRSSMB are the limits the sync
	// is held to, beside the ratio to COPY.
	syncUniverseSecondsBound = 60
	syncMaxRSSMB             = 200
)

// syncWorkload is one sync workload: its result's id and layout, the
// provider (its variables' NAME) and synthetic symbols the fake serves, the
// unmeasured runs first (a day already synced), the measured run's
// arguments, and the rows compared with COPY (a WHERE clause).
type syncWorkload struct {
	id, layout, provider string
	symbols              int
	before               [][]string
	args                 []string
	where                string
	// warm are paths under the provider's base URL fetched before the
	// measured run: the fake renders a bulk day on its first request and
	// keeps it, as a provider serves a finished day from its store, so
	// the measured window holds the sync's work, not the fake's.
	warm         []string
	secondsBound float64
	// target is the ratio to COPY the workload is held to; 0 reports it.
	target float64
}

// runSyncUniverseDay measures the daily update of a 50,000-symbol exchange
// from EODHD's bulk endpoint: the day before is synced first (unmeasured),
// so the measured day updates symbols that exist, as it does every day.
func (b *bench) runSyncUniverseDay(ctx context.Context) error {
	return b.runSync(ctx, syncWorkload{id: "sync_universe_day", provider: "EODHD", symbols: syncUniverseSymbols,
		layout: "EODHD eod-bulk-last-day JSON of 50,000 symbols (one day), from a local fake",
		before: [][]string{{"sync", "--provider", "eodhd", "--exchange", "XNAS", "--from", "2024-03-07", "--to", "2024-03-07"}},
		args:   []string{"sync", "--provider", "eodhd", "--exchange", "XNAS", "--to", "2024-03-08"},
		warm:   []string{"/api/eod-bulk-last-day/US?fmt=json&api_token=bench-token&date=2024-03-08"},
		where:  "date = '2024-03-08'", secondsBound: syncUniverseSecondsBound, target: 0.5})
}

// runSyncBackfill measures a ten-year backfill of 100 symbols from
// Tiingo's per-symbol history.
func (b *bench) runSyncBackfill(ctx context.Context) error {
	syms := make([]string, syncBackfillSymbols)
	for i := range syms {
		syms[i] = fmt.Sprintf("S%05d", i)
	}
	return b.runSync(ctx, syncWorkload{id: "sync_backfill", provider: "TIINGO", symbols: syncBackfillSymbols,
		layout: "Tiingo daily prices JSON, 100 symbols x 10 years (2014-2023), from a local fake",
		args:   []string{"sync", "--provider", "tiingo", "--symbols", strings.Join(syms, ","), "--from", "2014-01-01", "--to", "2023-12-31"},
		where:  "true"})
}

// syncRounds is how many times each sync workload is measured, each
// round from a fresh database, sync and COPY back to back: a run of well
// under a second is at the mercy of a shared machine's moment.
const syncRounds = 5

// runSync measures w: `marketdata-svc sync` timed with its CPU and peak
// memory, then COPY of the rows it stored into an empty table of the same
// shape, syncRounds times. The result is the round with the median ratio,
// with every round's ratio beside it.
func (b *bench) runSync(ctx context.Context, w syncWorkload) error {
	b.logf("workload %s", w.id)
	var rounds []ImportResult
	for range syncRounds {
		res, err := b.syncRound(ctx, w)
		if err != nil {
			return err
		}
		rounds = append(rounds, res)
	}
	slices.SortFunc(rounds, func(x, y ImportResult) int { return cmp.Compare(x.Ratio, y.Ratio) })
	res := rounds[len(rounds)/2]
	res.RoundRatios = nil
	for _, r := range rounds {
		res.RoundRatios = append(res.RoundRatios, r.Ratio)
	}
	res.Status = syncStatus(rounds, w.secondsBound, res.Target)
	b.logf("%s: median of %d rounds %.2f (rounds %.2f-%.2f): %s", w.id, len(rounds), res.Ratio, rounds[0].Ratio, rounds[len(rounds)-1].Ratio, res.Status)
	if w.id == "sync_backfill" {
		b.res.SyncBackfill = &res
	} else {
		b.res.SyncUniverseDay = &res
	}
	return nil
}

// syncStatus grades rounds: a bound broken in any round is a miss;
// against a ratio target, roundsStatus grades their ratios; without a
// target the figure is reported.
func syncStatus(rounds []ImportResult, secondsBound, target float64) string {
	for _, r := range rounds {
		if (secondsBound > 0 && r.ImportSeconds > secondsBound) || r.ImportMaxRSSMB > syncMaxRSSMB {
			return "miss"
		}
	}
	if target == 0 {
		return "report"
	}
	return roundsStatus(figuresOf(rounds, func(r ImportResult) float64 { return r.Ratio }), target)
}

// syncRound is one measurement of w from a fresh database.
func (b *bench) syncRound(ctx context.Context, w syncWorkload) (ImportResult, error) {
	res := ImportResult{ID: w.id, Target: w.target, Layout: w.layout,
		Ceiling: ImportCeiling{What: "COPY of the same rows (CSV) into an empty table of eod_bars' shape"}}
	env, stop, err := b.prepareSync(ctx, w.symbols, w.provider)
	if err != nil {
		return res, err
	}
	defer stop()
	for _, args := range w.before {
		if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), env: env, args: args}); err != nil {
			return res, err
		}
	}
	for _, path := range w.warm {
		if err := warmFake(ctx, env["MARKETDATA_SYNC_"+w.provider+"_URL"]+path); err != nil {
			return res, err
		}
	}
	out, err := b.timeImport(ctx, &res, env, w.args...)
	if err != nil {
		return res, err
	}
	res.ImportOutput = syncLine(out)
	n, err := b.db.value(ctx, syncDB, "SELECT count(*) FROM eod_bars WHERE "+w.where)
	if err != nil {
		return res, err
	}
	fmt.Sscan(n, &res.Rows)
	if err := b.syncCeiling(ctx, &res, w.where); err != nil {
		return res, err
	}
	b.score(&res)
	b.logf("%s: %.2f s, max RSS %.0f MB", res.ID, res.ImportSeconds, res.ImportMaxRSSMB)
	return res, nil
}

// prepareSync recreates and migrates the sync database with the exchange
// XNAS, and starts providerfake with n synthetic symbols; env points
// provider NAME (EODHD, TIINGO) at it.
func (b *bench) prepareSync(ctx context.Context, n int, name string) (env map[string]string, stop func(), err error) {
	if err := b.db.recreate(ctx, syncDB); err != nil {
		return nil, nil, err
	}
	env = b.marketdataEnv(syncDB)
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: env}); err != nil {
		return nil, nil, err
	}
	if err := b.db.exec(ctx, syncDB, "INSERT INTO exchanges (mic, name, timezone) VALUES ('XNAS', 'NASDAQ', 'America/New_York')"); err != nil {
		return nil, nil, err
	}
	vars, stopFake, err := b.startFake(ctx, name, "--symbols", fmt.Sprint(n))
	if err != nil {
		_ = b.db.exec(context.WithoutCancel(ctx), "postgres", "DROP DATABASE IF EXISTS "+syncDB+" WITH (FORCE)")
		return nil, nil, err
	}
	maps.Copy(env, vars)
	stop = func() {
		stopFake()
		_ = b.db.exec(context.WithoutCancel(ctx), "postgres", "DROP DATABASE IF EXISTS "+syncDB+" WITH (FORCE)")
	}
	return env, stop, nil
}

// startFake starts providerfake with args (after its token) and returns
// the variables that point provider NAME (EODHD, TIINGO) at it.
func (b *bench) startFake(ctx context.Context, name string, args ...string) (vars map[string]string, stop func(), err error) {
	fake := exec.CommandContext(ctx, b.benchTool("providerfake"), append([]string{"--token", "bench-token"}, args...)...)
	pipe, err := fake.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := fake.Start(); err != nil {
		return nil, nil, fmt.Errorf("start providerfake: %w", err)
	}
	stop = func() {
		_ = fake.Process.Kill()
		_ = fake.Wait()
	}
	line, err := bufio.NewReader(pipe).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "providerfake listening on ")
	if err != nil || !ok {
		stop()
		return nil, nil, fmt.Errorf("providerfake: %q: %v", line, err)
	}
	base := map[string]string{"EODHD": addr + "/eodhd", "TIINGO": addr}[name]
	vars = map[string]string{
		"MARKETDATA_SYNC_" + name + "_URL":             base,
		"MARKETDATA_SYNC_" + name + "_TOKEN":           "bench-token",
		"MARKETDATA_SYNC_" + name + "_RATE_PER_MINUTE": "100000",
		"MARKETDATA_SYNC_" + name + "_BURST":           "1000",
		"MARKETDATA_LOG_LEVEL":                         "warn",
	}
	return vars, stop, nil
}

// syncCeiling times COPY of the rows the sync stored (where) into an
// empty table of eod_bars' shape, from a CSV file written first.
func (b *bench) syncCeiling(ctx context.Context, res *ImportResult, where string) error {
	file := filepath.Join(b.cfg.Out, "sync-"+res.ID+".csv")
	defer os.Remove(file)
	if err := b.db.exec(ctx, syncDB, fmt.Sprintf(`\copy (SELECT symbol, date, open, high, low, close, volume FROM eod_bars WHERE %s) TO %s WITH (FORMAT csv)`, where, lit(file))); err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	res.FileMB = mb(st.Size())
	if err := b.db.exec(ctx, syncDB, "CREATE TABLE copy_target (LIKE eod_bars INCLUDING ALL)"); err != nil {
		return err
	}
	if err := b.timedCopy(ctx, res, syncDB, fmt.Sprintf(`\copy copy_target (symbol, date, open, high, low, close, volume) FROM %s WITH (FORMAT csv)`, lit(file))); err != nil {
		return err
	}
	n, err := b.db.value(ctx, syncDB, "SELECT count(*) FROM copy_target")
	if err != nil {
		return err
	}
	if n != fmt.Sprint(res.Rows) {
		return fmt.Errorf("%s: sync stored %d rows, COPY loaded %s", res.ID, res.Rows, n)
	}
	return nil
}

// timedCopy runs copySQL in db as res's COPY side, recording its wall
// time and command line.
func (b *bench) timedCopy(ctx context.Context, res *ImportResult, db, copySQL string) error {
	t0 := time.Now()
	if err := b.db.exec(ctx, db, copySQL); err != nil {
		return fmt.Errorf("copy ceiling: %w", err)
	}
	res.CopySeconds = time.Since(t0).Seconds()
	res.CopyCommand = b.r.commands[len(b.r.commands)-1]
	return nil
}

// warmFake reads url's whole answer from the providers' fake.
func warmFake(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("warm providerfake: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("warm providerfake: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("warm providerfake: status %d", resp.StatusCode)
	}
	return nil
}

// syncLine is the summary line sync prints.
func syncLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "rows/s") {
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(lastLines(out, 1))
}
