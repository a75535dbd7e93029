package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/bench/internal/loadgen"
)

// scale_update runs the daily update of a full universe against the scale
// dataset, as a deployment runs it every day: a bulk day of 50,000
// symbols (the dataset's own symbols with bars, the rest new listings),
// 20 of the dataset's symbols with a split or a dividend that day, synced
// while queries run, on a service whose cache was warm. The day is the
// weekday after the dataset's last bar; once measured it is removed and
// the 20 symbols' factors recomputed again, so the kept dataset is the
// same run after run.

const (
	updateID = "scale_update"
	// updateSymbols is the day's symbols, the dataset's and new ones.
	updateSymbols = 50_000
	// updateSplits and updateDividends are how many of the dataset's
	// symbols carry a split or a dividend with the day as ex-date.
	updateSplits    = 10
	updateDividends = 10
	// updatePages is the warmed pages, updateLoadSeconds the length of
	// the quiet load, updateP99Bound and updateSecondsBound the targets.
	updatePages        = 400
	updateLoadSeconds  = 10
	updateP99Bound     = 2.0
	updateSecondsBound = 60
	updateLoadList     = "scale_update-load"
)

// Page kinds of the warmed pages: a window that ends before the day, of
// symbols without the day's actions (an exact invalidation keeps it); a
// window of a symbol with an action that day; a window without an end,
// which the day extends.
const (
	pageHistorical = "historical"
	pageAffected   = "affected"
	pageOpen       = "open"
)

// updatePage is one warmed page.
type updatePage struct {
	Kind, Path string
}

// ScaleUpdate is scale_update in results.json.
type ScaleUpdate struct {
	Size string `json:"size"`
	Day  string `json:"day"`
	// Symbols is the day's symbols: Existing of the dataset, New ones.
	Symbols  int      `json:"symbols"`
	Existing int      `json:"existing"`
	New      int      `json:"new"`
	Splits   []string `json:"splits"`
	Dividend []string `json:"dividends"`
	// Sync is the timed `marketdata-svc sync` of the day (Rows: the day's
	// bars stored); no COPY beside it.
	Sync ImportResult `json:"sync"`
	// Quiet and During are the same load of cache-miss EOD range
	// queries, alone and while the sync runs (the requests sent from the
	// sync's start to its end).
	Load        string       `json:"load"`
	Quiet       LoadFigures  `json:"quiet"`
	During      LoadFigures  `json:"during"`
	P99Ratio    float64      `json:"p99_ratio"`
	Pages       []PageResult `json:"pages_by_kind"`
	HitBefore   float64      `json:"hit_rate_before"`
	HitAfter    float64      `json:"hit_rate_after"`
	MissedAfter []string     `json:"missed_after_examples,omitempty"`
	// Recompute is what the sync wrote and read for the factors.
	Recompute UpdateRecompute `json:"recompute"`
	Restore   string          `json:"restore"`
	// Statuses grade each target; Status is the row's.
	Statuses map[string]string `json:"statuses"`
	Status   string            `json:"status"`
	Note     string            `json:"note,omitempty"`
}

// LoadFigures are the latencies of one stretch of the query load.
type LoadFigures struct {
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	Errors   int64   `json:"errors"`
}

// PageResult is the replays of one kind of page, before and after the day.
type PageResult struct {
	Kind        string `json:"kind"`
	Pages       int    `json:"pages"`
	HitsBefore  int    `json:"hits_before"`
	HitsAfter   int    `json:"hits_after"`
	ExactWanted int    `json:"hits_after_exact_invalidation"`
}

// UpdateRecompute is what the factors' recomputation touched: eod_bars'
// updated rows (pg_stat_user_tables.n_tup_upd over the sync) beside the
// affected symbols' histories, and the day's symbols whose factors the
// load recomputed (readjust in marketdatadb/ingest/bars.go reads every
// bar of each symbol of the load with any split or dividend).
type UpdateRecompute struct {
	RowsUpdated      int64  `json:"rows_updated"`
	RowsInserted     int64  `json:"rows_inserted"`
	AffectedRows     int64  `json:"affected_history_rows"`
	ReadSymbols      int64  `json:"symbols_recomputed"`
	ReadRowsEstimate int64  `json:"rows_read_estimate"`
	Scope            string `json:"scope"`
}

// updatePagesOf draws the warmed pages: 80% historical windows of
// symbols without an action that day, 10% historical windows of affected
// symbols, 10% windows left open (no date_to) over the last weeks.
func updatePagesOf(r *rand.Rand, in scaleInputs, affected []string, n int) []updatePage {
	others := slices.DeleteFunc(slices.Clone(in.Symbols), func(s string) bool { return slices.Contains(affected, s) })
	plain := scaleInputs{Symbols: others, Days: in.Days}
	hit := scaleInputs{Symbols: affected, Days: in.Days}
	kinds := map[string]string{}
	paths := distinct(n, func() string {
		var p, kind string
		switch u := r.IntN(10); {
		case u < 8:
			p, kind = eodRangeRequest(r, plain), pageHistorical
		case u < 9:
			p, kind = eodRangeRequest(r, hit), pageAffected
		default:
			from := in.Days[max(0, len(in.Days)-1-r.IntN(60))]
			p, kind = "/v1/eod?symbols="+strings.Join(pick(r, others, 1+r.IntN(3)), ",")+"&date_from="+from.Format(day)+"&limit=100", pageOpen
		}
		if _, ok := kinds[p]; !ok {
			kinds[p] = kind
		}
		return p
	})
	out := make([]updatePage, len(paths))
	for i, p := range paths {
		out[i] = updatePage{Kind: kinds[p], Path: p}
	}
	return out
}

// nextWeekday is the first weekday after d.
func nextWeekday(d time.Time) time.Time {
	for d = d.AddDate(0, 0, 1); d.Weekday() == time.Saturday || d.Weekday() == time.Sunday; d = d.AddDate(0, 0, 1) {
	}
	return d
}

// pageResults counts the replays by kind; hit says whether page i was
// answered from the cache before and after the day.
func pageResults(pages []updatePage, before, after []bool) []PageResult {
	var out []PageResult
	for _, kind := range []string{pageHistorical, pageAffected, pageOpen} {
		pr := PageResult{Kind: kind}
		for i, p := range pages {
			if p.Kind != kind {
				continue
			}
			pr.Pages++
			if before[i] {
				pr.HitsBefore++
			}
			if after[i] {
				pr.HitsAfter++
			}
			if kind == pageHistorical && before[i] {
				pr.ExactWanted++
			}
		}
		out = append(out, pr)
	}
	return out
}

// hitRate is the share of true in hits.
func hitRate(hits []bool) float64 {
	if len(hits) == 0 {
		return 0
	}
	n := 0
	for _, h := range hits {
		if h {
			n++
		}
	}
	return float64(n) / float64(len(hits))
}

// gradeUpdate grades u's targets: the sync within 60 s (and the sync
// workloads' memory bound), the load's p99 during it within 2x of quiet,
// the cache keeping every historical page it held, and the rows the
// factors' recomputation updated within the affected symbols' histories.
// The row passes when all do; with the small size alone, set for 100M
// bars, it reports.
func gradeUpdate(u *ScaleUpdate, smallOnly bool) {
	ok := map[string]bool{
		"seconds":   u.Sync.ImportSeconds > 0 && u.Sync.ImportSeconds <= updateSecondsBound && u.Sync.ImportMaxRSSMB <= syncMaxRSSMB,
		"p99":       u.P99Ratio > 0 && u.P99Ratio <= updateP99Bound && u.During.Errors == 0 && u.Quiet.Errors == 0,
		"cache":     true,
		"recompute": u.Recompute.RowsUpdated <= u.Recompute.AffectedRows,
	}
	for _, p := range u.Pages {
		if p.HitsAfter < p.ExactWanted {
			ok["cache"] = false
		}
	}
	u.Statuses = map[string]string{}
	u.Status = "pass"
	for k, v := range ok {
		u.Statuses[k] = "pass"
		if !v {
			u.Statuses[k], u.Status = "miss", "miss"
		}
	}
	if smallOnly {
		for k := range u.Statuses {
			u.Statuses[k] = "report"
		}
		u.Status = "report"
		u.Note = "small size only (BENCH_SCALE=small): the targets, set for 100M bars, are not graded"
	}
}

// loadSample is one request of the query load.
type loadSample struct {
	start time.Time
	took  time.Duration
	err   bool
}

// queryLoad sends paths (each with key) over conns connections, one
// request after another on each, from when it is called until stop;
// each connection walks its own share of paths.
func queryLoad(ctx context.Context, base, key string, paths []string, conns int, stop <-chan struct{}) []loadSample {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var all []loadSample
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []loadSample
			for i := c * len(paths) / conns; ; i++ {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
					return
				default:
				}
				s := loadSample{start: time.Now()}
				req, err := http.NewRequestWithContext(ctx, "GET", base+paths[i%len(paths)]+"&access_key="+key, nil)
				if err == nil {
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						_, err = drain(resp)
					}
				}
				s.took, s.err = time.Since(s.start), err != nil
				mine = append(mine, s)
			}
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	return all
}

// drain reads an answer whole and fails on a status of 400 or more.
func drain(resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode >= 400 {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return n, err
}

// loadFigures summarises the samples that started within [from, to].
func loadFigures(samples []loadSample, from, to time.Time) LoadFigures {
	var lat []int64
	f := LoadFigures{Seconds: to.Sub(from).Seconds()}
	for _, s := range samples {
		if s.start.Before(from) || s.start.After(to) {
			continue
		}
		f.Requests++
		if s.err {
			f.Errors++
			continue
		}
		lat = append(lat, s.took.Microseconds())
	}
	slices.Sort(lat)
	f.P50Ms, f.P99Ms = float64(loadgen.Percentile(lat, 50))/1000, float64(loadgen.Percentile(lat, 99))/1000
	if f.Seconds > 0 {
		f.RPS = float64(f.Requests) / f.Seconds
	}
	return f
}

// measureScaleUpdate runs scale_update on set, the largest size measured.
func (b *bench) measureScaleUpdate(ctx context.Context, set *scaleSet, smallOnly bool) (*ScaleUpdate, error) {
	b.logf("workload %s (%s size)", updateID, set.size.Name)
	db := set.size.db()
	last, err := time.Parse(time.DateOnly, set.ds.DateTo)
	if err != nil {
		return nil, err
	}
	d := nextWeekday(last)
	u := &ScaleUpdate{Size: set.size.Name, Day: d.Format(time.DateOnly), Symbols: updateSymbols, Existing: set.size.Symbols,
		New: max(0, updateSymbols-set.size.Symbols)}
	// A run that stopped half-way left its day behind: take it out first.
	left, err := b.db.value(ctx, db, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM splits WHERE date = %[1]s UNION ALL SELECT 1 FROM dividends WHERE date = %[1]s UNION ALL SELECT 1 FROM tickers WHERE symbol = %[2]s) x", lit(u.Day), lit(newSymbol(set.size.Symbols))))
	if err != nil {
		return nil, err
	}
	affected, err := b.affectedSymbols(ctx, set)
	if err != nil {
		return nil, err
	}
	u.Splits, u.Dividend = affected[:updateSplits], affected[updateSplits:]
	if left != "0" {
		b.logf("%s: removing the day %s a stopped run left", updateID, u.Day)
		if err := b.removeUpdateDay(ctx, set, u, nil); err != nil {
			return nil, err
		}
	}
	sumBefore, err := b.factorSum(ctx, db, affected)
	if err != nil {
		return nil, err
	}
	pages := updatePagesOf(scaleRand(b.cfg.Seed, set.size.Name+"/"+updateID+"/pages"), set.in, affected, updatePages)
	lr := scaleRand(b.cfg.Seed, set.size.Name+"/"+updateID+"/load")
	load := distinct(40_000, func() string { return eodRangeRequest(lr, set.in) })
	if err := writeLines(filepath.Join(b.cfg.Out, "scale", set.size.Name, updateLoadList+".txt"), load); err != nil {
		return nil, err
	}
	u.Load = fmt.Sprintf("%d connections sending scale_eod_range's requests (%d distinct, each half walked by one phase), one after another", b.cfg.ScaleConnections, len(load))

	fakeArgs := []string{"--symbols", strconv.Itoa(updateSymbols), "--universe", strconv.Itoa(set.size.Symbols),
		"--seed", strconv.Itoa(b.cfg.Seed), "--exchanges", strconv.Itoa(set.size.Exchanges)}
	for i, s := range affected {
		if i < updateSplits {
			fakeArgs = append(fakeArgs, "--split", s+":"+u.Day+":2")
		} else {
			fakeArgs = append(fakeArgs, "--dividend", s+":"+u.Day+":0.5")
		}
	}
	vars, stopFake, err := b.startFake(ctx, "EODHD", fakeArgs...)
	if err != nil {
		return nil, err
	}
	defer stopFake()
	if err := warmFake(ctx, vars["MARKETDATA_SYNC_EODHD_URL"]+"/api/eod-bulk-last-day/US?fmt=json&api_token=bench-token&date="+u.Day); err != nil {
		return nil, err
	}
	hadXNAS, err := b.db.value(ctx, db, "SELECT count(*) FROM exchanges WHERE mic = 'XNAS'")
	if err != nil {
		return nil, err
	}
	if hadXNAS == "0" {
		if err := b.db.exec(ctx, db, "INSERT INTO exchanges (mic, name, timezone) VALUES ('XNAS', 'NASDAQ', 'America/New_York')"); err != nil {
			return nil, err
		}
	}

	measureErr := b.updateMeasure(ctx, set, u, pages, load, vars, affected)
	restoreErr := b.removeUpdateDay(ctx, set, u, func() error {
		if hadXNAS == "0" {
			return b.db.exec(ctx, db, "DELETE FROM exchanges WHERE mic = 'XNAS'")
		}
		return nil
	})
	if measureErr != nil {
		return nil, measureErr
	}
	if restoreErr != nil {
		return nil, fmt.Errorf("restore: %w", restoreErr)
	}
	sumAfter, err := b.factorSum(ctx, db, affected)
	if err != nil {
		return nil, err
	}
	if sumAfter != sumBefore {
		return nil, fmt.Errorf("restore: the factors of %s differ from before the day (md5 %s, was %s)", strings.Join(affected, ","), sumAfter, sumBefore)
	}
	u.Restore = fmt.Sprintf("day %s's bars, its %d actions and the %d new tickers deleted, the %d symbols' factors recomputed through `marketdata-svc import` of one of their own bars; md5 of their (symbol, date, split_factor, dividend, price_factor, volume_factor) equal before and after (%s)",
		u.Day, len(affected), u.New, len(affected), sumAfter)
	gradeUpdate(u, smallOnly)
	b.logf("%s: sync %.1f s (%d rows, max RSS %.0f MB); p99 quiet %.2f ms, during %.2f ms (%.2fx); hit rate %.3f before, %.3f after; %d rows updated (affected histories %d): %s",
		updateID, u.Sync.ImportSeconds, u.Sync.Rows, u.Sync.ImportMaxRSSMB, u.Quiet.P99Ms, u.During.P99Ms, u.P99Ratio, u.HitBefore, u.HitAfter,
		u.Recompute.RowsUpdated, u.Recompute.AffectedRows, u.Status)
	return u, nil
}

// updateMeasure is steps (a) to (e) of scale_update on a fresh instance.
func (b *bench) updateMeasure(ctx context.Context, set *scaleSet, u *ScaleUpdate, pages []updatePage, load []string, vars map[string]string, affected []string) error {
	db := set.size.db()
	if err := b.scaleStart(ctx, set, "update"); err != nil {
		return err
	}
	defer b.scaleStop(set)
	base := b.mdURL("")
	half := len(load) / 2
	// (a) The quiet load.
	stop := make(chan struct{})
	var samples []loadSample
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		samples = queryLoad(ctx, base, set.key, load[:half], b.cfg.ScaleConnections, stop)
		close(done)
	}()
	time.Sleep(updateLoadSeconds * time.Second)
	t1 := time.Now()
	close(stop)
	<-done
	u.Quiet = loadFigures(samples, t0.Add(time.Second), t1)
	// (b) Warm the pages, then replay them.
	for _, p := range pages {
		if _, err := httpCall(ctx, "GET", base+p.Path+"&access_key="+set.key, "", nil); err != nil {
			return err
		}
	}
	before, err := b.replayPages(ctx, set, pages)
	if err != nil {
		return err
	}
	// (c) The day, synced under the same load.
	stats := func() (upd, ins int64, err error) {
		rows, err := b.db.query(ctx, db, "SELECT n_tup_upd, n_tup_ins FROM pg_stat_user_tables WHERE relname = 'eod_bars'")
		if err != nil || len(rows) == 0 {
			return 0, 0, fmt.Errorf("eod_bars statistics: %v", err)
		}
		upd, _ = strconv.ParseInt(rows[0][0], 10, 64)
		ins, _ = strconv.ParseInt(rows[0][1], 10, 64)
		return upd, ins, nil
	}
	upd0, ins0, err := stats()
	if err != nil {
		return err
	}
	env := b.marketdataEnv(db)
	for k, v := range vars {
		env[k] = v
	}
	stop, done = make(chan struct{}), make(chan struct{})
	go func() {
		samples = queryLoad(ctx, base, set.key, load[half:], b.cfg.ScaleConnections, stop)
		close(done)
	}()
	time.Sleep(time.Second)
	u.Sync = ImportResult{ID: updateID, Layout: fmt.Sprintf("EODHD eod-bulk-last-day JSON of %d symbols (%d of the dataset, %d new), from a local fake", u.Symbols, u.Existing, u.New)}
	ts := time.Now()
	out, syncErr := b.timeImport(ctx, &u.Sync, env, "sync", "--provider", "eodhd", "--exchange", "XNAS", "--from", u.Day, "--to", u.Day)
	te := time.Now()
	close(stop)
	<-done
	if syncErr != nil {
		return syncErr
	}
	u.Sync.ImportOutput = syncLine(out)
	u.During = loadFigures(samples, ts, te)
	if u.Quiet.P99Ms > 0 {
		u.P99Ratio = u.During.P99Ms / u.Quiet.P99Ms
	}
	// The statistics reach the view when the sync's backend ends.
	time.Sleep(time.Second)
	upd1, ins1, err := stats()
	if err != nil {
		return err
	}
	u.Recompute.RowsUpdated, u.Recompute.RowsInserted = upd1-upd0, ins1-ins0
	counts, err := b.db.query(ctx, db, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE t.exchange_mic = 'XNAS') FROM tickers t, %s
		WHERE t.has_eod`, dayBarOf("t", u.Day, "1")))
	if err != nil {
		return err
	}
	u.Sync.Rows, _ = strconv.Atoi(counts[0][0])
	if n, _ := strconv.Atoi(counts[0][1]); u.Sync.Rows-n != u.Existing {
		return fmt.Errorf("the day updated %d of the dataset's %d symbols: providerfake --universe does not name them as generate did", u.Sync.Rows-n, u.Existing)
	}
	if err := b.recomputeScope(ctx, set, u, affected); err != nil {
		return err
	}
	// (d) The pages again, once the service has the new data version
	// (published when the sync committed; polled within a second or two
	// without Redis).
	time.Sleep(2 * time.Second)
	after, err := b.replayPages(ctx, set, pages)
	if err != nil {
		return err
	}
	u.HitBefore, u.HitAfter = hitRate(before), hitRate(after)
	u.Pages = pageResults(pages, before, after)
	// The misses an exact invalidation would not have made come first.
	for _, kinds := range [][]string{{pageHistorical}, {pageAffected, pageOpen}} {
		for i, p := range pages {
			if !after[i] && before[i] && slices.Contains(kinds, p.Kind) && len(u.MissedAfter) < 5 {
				u.MissedAfter = append(u.MissedAfter, p.Kind+" "+p.Path)
			}
		}
	}
	return nil
}

// replayPages requests each page once more and says which the cache
// answered: a page is a hit when the service counted a cache hit and no
// miss for it.
func (b *bench) replayPages(ctx context.Context, set *scaleSet, pages []updatePage) ([]bool, error) {
	read := func() (float64, float64) {
		c := scrapeCounters(b.mdURL("/metrics"), "marketdata_cache_hits", "marketdata_cache_misses")
		return c["marketdata_cache_hits_total"], c["marketdata_cache_misses_total"]
	}
	out := make([]bool, len(pages))
	h0, m0 := read()
	for i, p := range pages {
		if _, err := httpCall(ctx, "GET", b.mdURL(p.Path+"&access_key="+set.key), "", nil); err != nil {
			return nil, err
		}
		h1, m1 := read()
		out[i] = h1 > h0 && m1 == m0
		h0, m0 = h1, m1
	}
	return out, nil
}

// recomputeScope reads how many bars the affected symbols hold and how
// many of the day's symbols the load recomputed (readjust's scope: any
// split or dividend in their history).
func (b *bench) recomputeScope(ctx context.Context, set *scaleSet, u *ScaleUpdate, affected []string) error {
	rows, err := b.db.query(ctx, set.size.db(), fmt.Sprintf(`SELECT (SELECT count(*) FROM eod_bars WHERE symbol = ANY(%s)),
		(SELECT count(*) FROM (SELECT symbol FROM splits UNION SELECT symbol FROM dividends) a, %s)`,
		arrayLit(affected), dayBarOf("a", u.Day, "1")))
	if err != nil {
		return err
	}
	u.Recompute.AffectedRows, _ = strconv.ParseInt(rows[0][0], 10, 64)
	u.Recompute.ReadSymbols, _ = strconv.ParseInt(rows[0][1], 10, 64)
	if set.ds.Symbols > 0 {
		u.Recompute.ReadRowsEstimate = u.Recompute.ReadSymbols * set.ds.Bars / int64(set.ds.Symbols)
	}
	u.Recompute.Scope = fmt.Sprintf("readjust (marketdata-svc/internal/marketdatadb/ingest/bars.go, called by apply in load.go) recomputes every symbol of the load with any split or dividend in its history, not only those whose actions changed: %d of the day's symbols, about %d bars read, for %d with an action that day; it writes only the bars whose factors changed",
		u.Recompute.ReadSymbols, u.Recompute.ReadRowsEstimate, len(affected))
	return nil
}

// affectedSymbols draws the symbols that carry the day's actions, the
// splits first, from the symbols with bars that already have a split or
// a dividend: a symbol's factors are recomputed only while it has one, so
// that the day's removal can recompute them again.
func (b *bench) affectedSymbols(ctx context.Context, set *scaleSet) ([]string, error) {
	rows, err := b.db.query(ctx, set.size.db(), `SELECT symbol FROM (SELECT symbol FROM splits UNION SELECT symbol FROM dividends) a
		WHERE symbol IN (SELECT symbol FROM tickers WHERE has_eod) ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var with []string
	for _, r := range rows {
		with = append(with, r[0])
	}
	if len(with) < updateSplits+updateDividends {
		return nil, fmt.Errorf("%d symbols with corporate actions: too few", len(with))
	}
	return pick(scaleRand(b.cfg.Seed, set.size.Name+"/"+updateID+"/affected"), with, updateSplits+updateDividends), nil
}

// dayBarOf is a lateral subquery x of the bar of day of each symbol of
// the row alias outer, selecting what: eod_bars has no index on date
// alone, so the bars of one day are found symbol by symbol through the
// primary key. Its LIMIT keeps the planner from turning it into a join,
// for which it chose a scan of every bar, or probed tickers through
// their trigram index at 13 ms a symbol.
func dayBarOf(outer, day, what string) string {
	return fmt.Sprintf("LATERAL (SELECT %s FROM eod_bars b WHERE b.symbol = %s.symbol AND b.date = %s LIMIT 1) x", what, outer, lit(day))
}

// newSymbol is the name providerfake gives its synthetic symbol i beyond
// the dataset's (feedfake.SyntheticSymbol).
func newSymbol(i int) string { return fmt.Sprintf("S%05d", i) }

// newSymbolsSQL matches the day's new symbols: providerfake's S names
// (generate's universe symbols are letters only) on the exchange the
// sync lists new tickers on.
const newSymbolsSQL = `symbol ~ '^S[0-9]{5}$' AND exchange_mic = 'XNAS'`

func arrayLit(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = lit(s)
	}
	return "ARRAY[" + strings.Join(q, ",") + "]::text[]"
}

// factorSum is the md5 of the affected symbols' (symbol, date,
// split_factor, dividend, price_factor, volume_factor).
func (b *bench) factorSum(ctx context.Context, db string, symbols []string) (string, error) {
	return b.db.value(ctx, db, fmt.Sprintf(`SELECT md5(string_agg(concat_ws(' ', symbol, date, split_factor, dividend, price_factor, volume_factor), ',' ORDER BY symbol, date))
		FROM eod_bars WHERE symbol = ANY(%s)`, arrayLit(symbols)))
}

// removeUpdateDay takes u's day out of set's database: its bars (found
// ticker by ticker, dayBarOf), its actions, the new tickers and the sync's progress; then it
// recomputes the affected symbols' factors through the service's own
// load path, an import of one of each symbol's bars as stored (the
// load recomputes every symbol it writes), and vacuums what changed so
// that index-only reads stay so. also, when set, runs before the vacuum.
func (b *bench) removeUpdateDay(ctx context.Context, set *scaleSet, u *ScaleUpdate, also func() error) error {
	db := set.size.db()
	affected := append(slices.Clone(u.Splits), u.Dividend...)
	if err := b.db.exec(ctx, db, fmt.Sprintf(`DELETE FROM eod_bars WHERE ctid = ANY(ARRAY(SELECT x.ctid FROM tickers t, %[3]s WHERE t.has_eod));
DELETE FROM splits WHERE date = %[1]s; DELETE FROM dividends WHERE date = %[1]s;
DELETE FROM tickers WHERE %[2]s;
DELETE FROM sync_progress WHERE provider = 'eodhd' AND symbol = '@XNAS'`, lit(u.Day), newSymbolsSQL, dayBarOf("t", u.Day, "ctid"))); err != nil {
		return err
	}
	file := filepath.Join(b.cfg.Out, "scale", set.size.Name, updateID+"-restore.csv")
	defer os.Remove(file)
	if err := b.db.exec(ctx, db, fmt.Sprintf(`\copy (SELECT DISTINCT ON (symbol) symbol, date, open, high, low, close, volume FROM eod_bars WHERE symbol = ANY(%s) ORDER BY symbol, date) TO %s WITH (FORMAT csv, HEADER)`,
		arrayLit(affected), lit(file))); err != nil {
		return err
	}
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"import", "--kind", "prices", file}, env: b.marketdataEnv(db)}); err != nil {
		return err
	}
	if also != nil {
		if err := also(); err != nil {
			return err
		}
	}
	return b.db.exec(ctx, db, "VACUUM (ANALYZE) eod_bars, tickers, splits, dividends")
}

// updateResultRows are scale_update's rows of the Results table: the
// sync's time, the load's p99 during it against quiet, the cache's hit
// rate and the rows the factors' recomputation updated.
func updateResultRows(u *ScaleUpdate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| scale_update: `marketdata-svc sync` of a %d-symbol day (%d of the %s dataset's symbols, %d new, %d splits and %d dividends) against the dataset, under query load; %d rows, max RSS %.0f MB | %.1f s | | | | | | | | ≤ %d s | %s | | |\n",
		u.Symbols, u.Existing, u.Size, u.New, len(u.Splits), len(u.Dividend), u.Sync.Rows, u.Sync.ImportMaxRSSMB, u.Sync.ImportSeconds, updateSecondsBound, statusText(u.Statuses["seconds"]))
	fmt.Fprintf(&b, "| scale_update: EOD range queries during the sync (%s size) | %s | %s | %s | %d | same load, quiet | %s | %s / %s | %s× | p99 ≤ %.0f× quiet | %s | | |\n",
		u.Size, f0(u.During.RPS), f2(u.During.P50Ms), f2(u.During.P99Ms), u.During.Errors, f0(u.Quiet.RPS), f2(u.Quiet.P50Ms), f2(u.Quiet.P99Ms), f2(u.P99Ratio), updateP99Bound, statusText(u.Statuses["p99"]))
	held := 0
	for _, p := range u.Pages {
		held += p.ExactWanted
	}
	fmt.Fprintf(&b, "| scale_update: cache hit rate of %d warmed pages, before → after the day | %.3f → %.3f | | | | | | | | the %d historical pages of untouched symbols stay cached (%d did) | %s | | |\n",
		updatePagesTotal(u), u.HitBefore, u.HitAfter, held, hitsAfterOf(u, pageHistorical), statusText(u.Statuses["cache"]))
	fmt.Fprintf(&b, "| scale_update: eod_bars rows updated by the factors' recomputation | %d | | | | | | | | ≤ the %d affected symbols' %d bars | %s | | |\n",
		u.Recompute.RowsUpdated, len(u.Splits)+len(u.Dividend), u.Recompute.AffectedRows, statusText(u.Statuses["recompute"]))
	return b.String()
}

func updatePagesTotal(u *ScaleUpdate) int {
	n := 0
	for _, p := range u.Pages {
		n += p.Pages
	}
	return n
}

func hitsAfterOf(u *ScaleUpdate, kind string) int {
	for _, p := range u.Pages {
		if p.Kind == kind {
			return p.HitsAfter
		}
	}
	return 0
}

// renderScaleUpdate writes scale_update's section of BENCHMARKS.md.
func renderScaleUpdate(w func(string, ...any), u *ScaleUpdate) {
	w("### Scale: the daily update at full size (scale_update)\n\n")
	w("The %s scale dataset takes day %s, the weekday after its last bar, from the EODHD fake's bulk endpoint: %d symbols, %d of them the dataset's (named as `generate --universe` names them) and %d new, with a split (2:1) on %s and a cash dividend (0.5) on %s. On a freshly started marketdata-svc (Redis flushed), in order:\n\n",
		u.Size, u.Day, u.Symbols, u.Existing, u.New, strings.Join(u.Splits, ", "), strings.Join(u.Dividend, ", "))
	w("1. **Quiet load:** %s; for %d s: %s req/s, p50 %s ms, p99 %s ms, %d errors.\n", u.Load, updateLoadSeconds, f0(u.Quiet.RPS), f2(u.Quiet.P50Ms), f2(u.Quiet.P99Ms), u.Quiet.Errors)
	w("2. **Warm cache:** %d pages (windows of 1–5 symbols) requested once, then replayed: hit rate **%.3f** before the day (from marketdata_cache_hits_total and _misses_total around each request).\n", updatePagesTotal(u), u.HitBefore)
	w("3. **The day under load:** `%s`: **%.1f s** end to end (fetch, parse, store, factors, version publish; target ≤ %d s), %d rows, %.1f s CPU, max RSS %.0f MB. Output: `%s`. The same load during it: %s req/s, p50 %s ms, p99 **%s ms**, %d errors: %s× the quiet p99 (target ≤ %.0f×).\n",
		u.Sync.ImportCommand, u.Sync.ImportSeconds, updateSecondsBound, u.Sync.Rows, u.Sync.ImportCPUSeconds, u.Sync.ImportMaxRSSMB, u.Sync.ImportOutput,
		f0(u.During.RPS), f2(u.During.P50Ms), f2(u.During.P99Ms), u.During.Errors, f2(u.P99Ratio), updateP99Bound)
	w("4. **The pages again:** hit rate **%.3f** after the day.\n\n", u.HitAfter)
	w("| pages | count | hits before | hits after | hits after with exact invalidation |\n|---|---:|---:|---:|---:|\n")
	for _, p := range u.Pages {
		w("| %s | %d | %d | %d | %d |\n", p.Kind, p.Pages, p.HitsBefore, p.HitsAfter, p.ExactWanted)
	}
	w("\nHistorical pages end before the day and hold none of its actions' symbols: an exact invalidation keeps them. Affected pages hold a symbol with an action that day; open pages have no date_to, so the day extends them.")
	if len(u.MissedAfter) > 0 {
		w(" Pages that missed after the day, for example: %s.", "`"+strings.Join(u.MissedAfter, "`, `")+"`")
	}
	w("\n\n5. **Factors:** eod_bars' n_tup_upd over the sync: **%d** rows updated (%d inserted), against %d bars of the %d affected symbols. %s.\n\n",
		u.Recompute.RowsUpdated, u.Recompute.RowsInserted, u.Recompute.AffectedRows, len(u.Splits)+len(u.Dividend), u.Recompute.Scope)
	w("Afterwards: %s.\n\n", u.Restore)
	if u.Note != "" {
		w("%s.\n\n", u.Note)
	}
}
