package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// ScaleRun is the scale phase in results.json: the datasets, the service's
// memory and what the run learnt beside the workloads, whose rows are in
// Results.Workloads under their ids (WorkloadResult.Scale).
type ScaleRun struct {
	// Only is "small" when BENCH_SCALE=small measured the small size alone.
	Only        string         `json:"only,omitempty"`
	Datasets    []ScaleDataset `json:"datasets"`
	Concurrency int            `json:"concurrency"`
	Rounds      int            `json:"rounds"`
	HitRounds   int            `json:"hit_rounds"`
	// HitPages pages are requested by scale_hit, page k with a weight of
	// 1/k^ZipfExponent.
	HitPages     int     `json:"hit_pages"`
	ZipfExponent float64 `json:"zipf_exponent"`
	// Memory is each size's marketdata-svc: the highest VmHWM of its
	// instances over the scale workloads.
	Memory    []MemoryResult    `json:"memory"`
	PlansFile string            `json:"plans_file"`
	PlanFlags []string          `json:"plan_flags,omitempty"`
	Relevance []SearchRelevance `json:"search_relevance,omitempty"`
	Seconds   float64           `json:"seconds"`
}

// ScaleFigures are a scale workload's figures at each size.
type ScaleFigures struct {
	Request     string `json:"request"`
	Concurrency int    `json:"concurrency"`
	// Sizes are the sides of the median round, small first.
	Sizes  []ScaleSizeFigures `json:"sizes"`
	Rounds []ScaleRound       `json:"rounds"`
	// RoundRatios are the ratio held to the target in each round; Ratio
	// is that of the median round, RatioWhat says what it divides.
	RoundRatios []float64 `json:"round_ratios,omitempty"`
	Ratio       float64   `json:"ratio,omitempty"`
	RatioWhat   string    `json:"ratio_what,omitempty"`
	// Distinct is how many distinct requests each list holds, by size and
	// list; Repeats names the measurements that sent more than that in
	// one service instance's life (a later request could then be a hit).
	Distinct map[string]int `json:"distinct_requests"`
	Repeats  []string       `json:"repeats,omitempty"`
	Note     string         `json:"note,omitempty"`
}

// ScaleSizeFigures are one size's sides.
type ScaleSizeFigures struct {
	Size    string `json:"size"`
	Service Side   `json:"service"`
	// Base is what the service is compared with at the same size: the
	// pages at offset 0-99 (scale_exchange_tickers), bare Gin (scale_hit).
	Base  *Side         `json:"base,omitempty"`
	Ratio float64       `json:"ratio,omitempty"`
	Cache *CacheFigures `json:"cache,omitempty"`
}

// ScaleRound is one measurement of one size in one round.
type ScaleRound struct {
	Round     int     `json:"round"`
	Size      string  `json:"size"`
	RPS       float64 `json:"rps"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	Errors    int64   `json:"errors"`
	BaseRPS   float64 `json:"base_rps,omitempty"`
	BaseP50Ms float64 `json:"base_p50_ms,omitempty"`
	Ratio     float64 `json:"ratio,omitempty"`
}

// CacheFigures are scale_hit's cache over one measurement, from the
// service's counters and Redis's GET calls. Every EOD lookup counts as a
// hit or a miss; one the in-process layer did not answer made one Redis
// GET, unless Redis was being bypassed after an error (a fallback that
// is no error), so in-process hits are lookups - GETs - (fallbacks -
// errors).
type CacheFigures struct {
	Lookups       float64 `json:"lookups"`
	Hits          float64 `json:"hits"`
	Misses        float64 `json:"misses"`
	Fallbacks     float64 `json:"fallbacks"`
	Errors        float64 `json:"errors"`
	RedisGets     float64 `json:"redis_gets"`
	MemoryHits    float64 `json:"memory_hits"`
	HitRate       float64 `json:"hit_rate"`
	MemoryHitRate float64 `json:"memory_hit_rate"`
	// MemoryMB is what the in-process layer holds at the end
	// (marketdata_cache_memory_bytes); the Redis layer's keys and bytes
	// are Redis's own.
	MemoryMB    float64 `json:"memory_mb"`
	RedisKeys   int64   `json:"redis_keys"`
	RedisUsedMB float64 `json:"redis_used_mb"`
	// ZipfTop is the share of requests that the most requested pages
	// draw, by number of pages: what a cache of that many pages can hit.
	ZipfTop map[string]float64 `json:"zipf_top_share"`
}

// SearchRelevance describes what scale_ticker_search's answers hold, from
// Queries searches drawn as the workload draws them, 10 results each.
type SearchRelevance struct {
	Size    string `json:"size"`
	Queries int    `json:"queries"`
	// Totals are the matches of each search (pagination.total).
	MedianTotal int64 `json:"median_total"`
	MaxTotal    int64 `json:"max_total"`
	// FirstPagePrefix is the share of first-page results whose symbol, or
	// a word of whose name, starts with the term; the rest contain it
	// elsewhere. PrefixSymbolFirst is the share of symbol-prefix searches
	// whose first result is a symbol starting with the term.
	FirstPagePrefix   float64 `json:"first_page_prefix_share"`
	PrefixSymbolFirst float64 `json:"prefix_symbol_first_share"`
	Example           string  `json:"example"`
}

// scaleSet is one size's dataset and requests.
type scaleSet struct {
	size  scaleSize
	ds    *ScaleDataset
	key   string
	in    scaleInputs
	deep  int
	lists map[string]*scaleList
	order string // scale_hit's Zipf order file
	hwm   int64  // highest VmHWM of this size's instances
}

// scaleList is one list of distinct requests: the file the wrk script
// walks, and four more requests for the SQL capture.
type scaleList struct {
	file   string
	n      int
	probes []string
}

// scaleSpec is one scale workload.
type scaleSpec struct {
	id, title, request, target string
	// lists are the request lists measured (for scale_exchange_tickers
	// the pages at offset 0-99, then the deep ones); n is each one's
	// length.
	lists []string
	n     int
}

const (
	scaleHitPages   = 100_000
	scaleHitDraws   = 1_000_000
	zipfExponent    = 1.0
	scaleMemoryMB   = 250
	shallowList     = "scale_exchange_tickers/offset-0"
	deepList        = "scale_exchange_tickers/deep"
	scaleHitList    = "scale_hit"
	scaleSearchList = "scale_ticker_search"
)

// scaleSpecs are the latency workloads (scale_hit is apart: a throughput
// against bare Gin).
var scaleSpecs = []scaleSpec{
	{id: "scale_eod_range", title: "`/v1/eod?symbols=` 1–5 symbols, a 1-year window, limit=100", n: 60_000,
		request: "1 to 5 random symbols with bars, date_from a random trading day, date_to a year later, limit=100",
		target:  "p50 ratio large/small ≤ 1.25; p99 ≤ 50 ms", lists: []string{"scale_eod_range"}},
	{id: "scale_eod_latest", title: "`/v1/eod/latest?symbols=` 100 symbols", n: 12_000,
		request: "100 random symbols with bars, limit=100", target: "p50 ≤ 30 ms", lists: []string{"scale_eod_latest"}},
	{id: "scale_eod_date", title: "`/v1/eod/{date}?symbols=` 100 symbols", n: 12_000,
		request: "a random trading day, 100 random symbols with bars, limit=100", target: "p50 ≤ 30 ms", lists: []string{"scale_eod_date"}},
	{id: "scale_ticker_search", title: "`/v2/tickerslist?search=` a 3-letter prefix or a word of a name", n: 60_000,
		request: "half the time the first 3 letters of a random ticker's symbol, else a word of its name (not the legal suffix), lower-case; limit 51-100",
		target:  "p50 ≤ 15 ms; relevance documented", lists: []string{scaleSearchList}},
	{id: "scale_exchange_tickers", title: "`/v1/exchanges/{mic}/tickers` at offset 10,000+ vs 0–99", n: 30_000,
		request: "an exchange listing more than offset+100 tickers, limit 51-100, offset 0-99 or deep (10,000 to 10,999 at the large size, the same share of the small one's tickers)",
		target:  "p50 ratio deep / offset 0 ≤ 2", lists: []string{shallowList, deepList}},
}

// scaleHitSpec is scale_hit.
var scaleHitSpec = scaleSpec{id: "scale_hit", title: "`eod_hit` over 100k distinct cached pages (Zipf)", n: scaleHitPages,
	request: "eod_hit's request (2 symbols, limit=100) at 100,000 pairs of symbols and last days, page k requested with weight 1/k",
	target:  "≥ 0.7× of bare Gin; memory cache hit rate and bytes reported", lists: []string{scaleHitList}}

// runScale prepares the scale datasets and measures every scale workload
// the run names at each size.
func (b *bench) runScale(ctx context.Context) error {
	t0 := time.Now()
	run := &ScaleRun{Only: b.cfg.Scale, Concurrency: b.cfg.ScaleConnections, Rounds: b.cfg.ScaleRounds, HitRounds: b.cfg.Rounds,
		HitPages: scaleHitPages, ZipfExponent: zipfExponent, PlansFile: "bench/scale-plans.md"}
	var sets []*scaleSet
	for _, s := range b.sizes() {
		ds, err := b.prepareScale(ctx, s)
		if err != nil {
			return err
		}
		run.Datasets = append(run.Datasets, *ds)
		set, err := b.scaleRequests(ctx, s, ds)
		if err != nil {
			return fmt.Errorf("requests of %s: %w", s.db(), err)
		}
		sets = append(sets, set)
	}
	specs := b.wantedScaleSpecs()
	// scale_update alone runs no read workload whose plans to explain.
	if len(specs) > 0 {
		plans, err := b.scalePlans(ctx, sets, specs)
		if err != nil {
			return fmt.Errorf("plans: %w", err)
		}
		run.PlanFlags = planFlags(plans)
		file := filepath.Join(b.cfg.Root, run.PlansFile)
		doc := renderScalePlans(plans, b.res.GitRevision, b.started)
		// A subset run keeps the plans of the workloads it did not run.
		if old, err := os.ReadFile(file); err == nil {
			doc = keepPlanSections(doc, string(old))
		}
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	if b.want("scale_ticker_search") {
		for _, set := range sets {
			rel, err := b.searchRelevance(ctx, set)
			if err != nil {
				return fmt.Errorf("search relevance: %w", err)
			}
			run.Relevance = append(run.Relevance, rel)
		}
	}
	var rows []WorkloadResult
	for _, sp := range specs {
		if sp.id == scaleHitSpec.id {
			continue
		}
		row, err := b.measureScale(ctx, sets, sp)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.id, err)
		}
		rows = append(rows, row)
	}
	if b.want(scaleHitSpec.id) {
		row, err := b.measureScaleHit(ctx, sets)
		if err != nil {
			return fmt.Errorf("scale_hit: %w", err)
		}
		rows = append(rows, row)
	}
	if b.want(updateID) {
		// The largest size measured: the day runs against what a
		// deployment holds.
		u, err := b.measureScaleUpdate(ctx, sets[len(sets)-1], len(sets) == 1)
		if err != nil {
			return fmt.Errorf("%s: %w", updateID, err)
		}
		b.res.ScaleUpdate = u
	}
	for i := range rows {
		if rows[i].Status == "miss" {
			rows[i].Profile = b.profileScale(ctx, sets[len(sets)-1], rows[i].ID)
		}
	}
	for _, set := range sets {
		m := MemoryResult{Service: "marketdata-svc, scale " + set.size.Name, VmHWMMB: mb(set.hwm), TargetMB: scaleMemoryMB, Status: "pass"}
		for _, r := range rows {
			for _, sz := range r.Scale.Sizes {
				if sz.Size == set.size.Name {
					m.MaxRSSUnderLoadMB = max(m.MaxRSSUnderLoadMB, sz.Service.MaxRSSMB)
				}
			}
		}
		if m.VmHWMMB >= m.TargetMB {
			m.Status = "miss"
		}
		run.Memory = append(run.Memory, m)
	}
	run.Seconds = time.Since(t0).Seconds()
	b.res.Scale = run
	b.res.Workloads = append(b.res.Workloads, rows...)
	return nil
}

// wantedScaleSpecs are the scale workloads of the run, scale_hit last.
func (b *bench) wantedScaleSpecs() []scaleSpec {
	var out []scaleSpec
	for _, sp := range append(slices.Clone(scaleSpecs), scaleHitSpec) {
		if b.want(sp.id) {
			out = append(out, sp)
		}
	}
	return out
}

// scaleRequests reads what set's requests are drawn from, creates its
// key, and writes every request list.
func (b *bench) scaleRequests(ctx context.Context, s scaleSize, ds *ScaleDataset) (*scaleSet, error) {
	set := &scaleSet{size: s, ds: ds, lists: map[string]*scaleList{}}
	first, err := time.Parse(time.DateOnly, ds.DateFrom)
	if err != nil {
		return nil, err
	}
	last, err := time.Parse(time.DateOnly, ds.DateTo)
	if err != nil {
		return nil, err
	}
	set.in.Days = weekdays(first, last)
	rows, err := b.db.query(ctx, s.db(), "SELECT symbol, name, has_eod FROM tickers ORDER BY symbol")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		set.in.Tickers = append(set.in.Tickers, tickerName{Symbol: r[0], Name: r[1]})
		if r[2] == "t" {
			set.in.Symbols = append(set.in.Symbols, r[0])
		}
	}
	if len(set.in.Symbols) < 100 || len(set.in.Days) < 300 {
		return nil, fmt.Errorf("%d symbols with bars over %d days: too few", len(set.in.Symbols), len(set.in.Days))
	}
	counts, err := b.db.query(ctx, s.db(), "SELECT exchange_mic, count(*) FROM tickers WHERE exchange_mic IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1")
	if err != nil {
		return nil, err
	}
	for _, r := range counts {
		n, _ := strconv.Atoi(r[1])
		set.in.Exchanges = append(set.in.Exchanges, exchangeCount{MIC: r[0], Tickers: n})
	}
	deepX, deep := deepExchanges(set.in, deepOffset(s.Tickers))
	set.deep = deep
	draws := map[string]func(r *rand.Rand) string{
		"scale_eod_range":  func(r *rand.Rand) string { return eodRangeRequest(r, set.in) },
		"scale_eod_latest": func(r *rand.Rand) string { return eodLatestRequest(r, set.in) },
		"scale_eod_date":   func(r *rand.Rand) string { return eodDateRequest(r, set.in) },
		scaleSearchList:    func(r *rand.Rand) string { return searchRequest(r, set.in) },
		shallowList:        func(r *rand.Rand) string { return exchangeRequest(r, deepX, deep, false) },
		deepList:           func(r *rand.Rand) string { return exchangeRequest(r, deepX, deep, true) },
		scaleHitList:       func(r *rand.Rand) string { return hitRequest(r, set.in) },
	}
	dir := filepath.Join(b.cfg.Out, "scale", s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, sp := range b.wantedScaleSpecs() {
		for _, name := range sp.lists {
			r := scaleRand(b.cfg.Seed, s.Name+"/"+name)
			all := distinct(sp.n+4, func() string { return draws[name](r) })
			if len(all) < 8 {
				return nil, fmt.Errorf("%s: only %d distinct requests", name, len(all))
			}
			l := &scaleList{file: filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".txt"), n: len(all) - 4, probes: all[len(all)-4:]}
			if err := writeLines(l.file, all[:l.n]); err != nil {
				return nil, err
			}
			set.lists[name] = l
		}
	}
	if set.lists[scaleHitList] != nil {
		z := newZipf(set.lists[scaleHitList].n, zipfExponent)
		r := scaleRand(b.cfg.Seed, s.Name+"/zipf")
		order := make([]string, scaleHitDraws)
		for i := range order {
			order[i] = strconv.Itoa(z.draw(r))
		}
		set.order = filepath.Join(dir, "scale_hit-order.txt")
		if err := writeLines(set.order, order); err != nil {
			return nil, err
		}
	}
	set.key, err = b.createKey(ctx, b.bin("marketdata-svc"), b.marketdataEnv(s.db()), "bench-scale",
		"--rate-per-second", fmt.Sprint(b.cfg.MDRate), "--monthly-quota", fmt.Sprint(b.cfg.MDQuota))
	if err != nil {
		return nil, err
	}
	b.r.addSecret(set.key, "$SCALE_KEY_"+strings.ToUpper(s.Name))
	return set, nil
}

// scaleStart starts marketdata-svc on set's database with an empty Redis
// database, so that nothing an earlier instance cached answers it.
func (b *bench) scaleStart(ctx context.Context, set *scaleSet, phase string) error {
	if _, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "FLUSHDB"}, quiet: true}); err != nil {
		return err
	}
	var err error
	if b.mdSvc, err = b.serve(ctx, "marketdata-svc", "MARKETDATA_", b.marketdataEnv(set.size.db()), b.cfg.Ports.Marketdata,
		b.cfg.Ports.MarketdataPprof, "scale-"+set.size.Name+"-", phase); err != nil {
		return err
	}
	return b.mdSvc.waitHTTP(ctx, b.mdURL("/readyz"), 60*time.Second)
}

// scaleStop stops the instance of set, keeping its peak resident memory.
func (b *bench) scaleStop(set *scaleSet) {
	if b.mdSvc != nil {
		if hwm, _, err := memStatus(b.mdSvc.pid()); err == nil {
			set.hwm = max(set.hwm, hwm)
		}
	}
	b.stopServices()
}

// scaleWorkload is the wrk side of list l of set in round r of rounds:
// the warm-up and the measurement each start at their own share of the
// list, so no round repeats another's requests.
func (b *bench) scaleWorkload(set *scaleSet, l *scaleList, order string, conns, r, rounds int) httpWorkload {
	threads, _ := httpWorkload{conns: conns}.load(b.cfg)
	n := l.n
	if order != "" {
		n = scaleHitDraws
	}
	return httpWorkload{url: b.mdURL(""), script: "paths.lua", conns: conns, args: func(warmup bool) []string {
		slot := 2*r + 1
		if warmup {
			slot = 2 * r
		}
		args := []string{l.file, strconv.Itoa(threads), strconv.Itoa(slot * n / (2 * rounds)), set.key}
		if order != "" {
			args = append(args, order)
		}
		return args
	}}
}

// measureScale measures a latency workload: in each round every size, in
// turn, each with a fresh instance that serves the workload's lists.
func (b *bench) measureScale(ctx context.Context, sets []*scaleSet, sp scaleSpec) (WorkloadResult, error) {
	b.logf("workload %s", sp.id)
	rounds := b.cfg.ScaleRounds
	fig := &ScaleFigures{Request: sp.request, Concurrency: b.cfg.ScaleConnections, Distinct: map[string]int{}}
	type sides struct{ lists []Side }
	measured := make([]map[string]sides, rounds)
	for r := range rounds {
		measured[r] = map[string]sides{}
		for _, set := range sets {
			if err := b.scaleStart(ctx, set, "run"); err != nil {
				return WorkloadResult{}, err
			}
			got := make([]Side, len(sp.lists))
			// The lists of a workload alternate which goes first, so
			// that neither always meets the warmer instance.
			order := make([]int, len(sp.lists))
			for i := range order {
				order[i] = i
			}
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				l := set.lists[sp.lists[i]]
				fig.Distinct[set.size.Name+" "+sp.lists[i]] = l.n
				side, err := b.measureHTTP(ctx, b.scaleWorkload(set, l, "", b.cfg.ScaleConnections, r, rounds), b.mdSvc.pid(), "marketdata-svc",
					b.serviceCounters(ctx, "marketdata-svc", set.size.db()))
				if err != nil {
					b.scaleStop(set)
					return WorkloadResult{}, err
				}
				got[i] = side
				// The warm-up sent about as many a second as the measurement.
				served := side.Requests + int64(float64(side.Requests)*b.cfg.Warmup.Seconds()/b.cfg.Duration.Seconds())
				if served > int64(l.n) {
					fig.Repeats = append(fig.Repeats, fmt.Sprintf("round %d, %s, %s: about %d requests for %d distinct", r+1, set.size.Name, sp.lists[i], served, l.n))
				}
				b.logf("%s %s %s round %d: %.0f req/s, p50 %.2f ms, p99 %.2f ms", sp.id, set.size.Name, sp.lists[i], r+1, side.RPS, side.P50Ms, side.P99Ms)
			}
			b.scaleStop(set)
			measured[r][set.size.Name] = sides{got}
		}
	}
	// Within a size, the deep pages against those at offset 0-99.
	sizeRatio := func(s sides) float64 {
		if len(s.lists) < 2 || s.lists[0].P50Ms <= 0 {
			return 0
		}
		return s.lists[1].P50Ms / s.lists[0].P50Ms
	}
	held := sets[len(sets)-1].size.Name
	small := sets[0].size.Name
	for r, m := range measured {
		for _, set := range sets {
			s := m[set.size.Name]
			main := s.lists[len(s.lists)-1]
			sr := ScaleRound{Round: r + 1, Size: set.size.Name, RPS: main.RPS, P50Ms: main.P50Ms, P99Ms: main.P99Ms, Errors: main.Errors}
			if len(s.lists) > 1 {
				sr.BaseRPS, sr.BaseP50Ms, sr.Ratio = s.lists[0].RPS, s.lists[0].P50Ms, sizeRatio(s)
			}
			fig.Rounds = append(fig.Rounds, sr)
		}
	}
	// Which ratio the target holds: large over small where the target
	// compares the sizes, else the held size's own.
	roundRatio := func(m map[string]sides) float64 {
		if len(sp.lists) > 1 {
			return sizeRatio(m[held])
		}
		s, l := m[small].lists[0], m[held].lists[0]
		if held == small || s.P50Ms <= 0 {
			return 0
		}
		return l.P50Ms / s.P50Ms
	}
	for _, m := range measured {
		fig.RoundRatios = append(fig.RoundRatios, roundRatio(m))
	}
	by := roundRatio
	if (sp.id != "scale_eod_range" && sp.id != "scale_exchange_tickers") || (held == small && len(sp.lists) == 1) {
		// An absolute target, or no ratio: the round of the median p50.
		by = func(m map[string]sides) float64 { return m[held].lists[0].P50Ms }
	}
	med := medianRound(measured, by)
	fig.Ratio = roundRatio(med)
	if len(sp.lists) > 1 {
		fig.RatioWhat = "p50 of the deep pages over p50 at offset 0-99, " + held + " size"
	} else if held != small {
		fig.RatioWhat = "p50 at the large size over p50 at the small size"
	}
	for _, set := range sets {
		s := med[set.size.Name]
		sz := ScaleSizeFigures{Size: set.size.Name, Service: s.lists[len(s.lists)-1]}
		if len(s.lists) > 1 {
			base := s.lists[0]
			sz.Base, sz.Ratio = &base, sizeRatio(s)
		}
		fig.Sizes = append(fig.Sizes, sz)
	}
	row := WorkloadResult{ID: sp.id, Title: sp.title, TargetText: sp.target, Concurrency: b.cfg.ScaleConnections, Scale: fig,
		Service: fig.Sizes[len(fig.Sizes)-1].Service, Ratio: fig.Ratio}
	row.Status = gradeScale(sp.id, fig, held == small)
	if held == small {
		fig.Note = "small size only (BENCH_SCALE=small): no large/small ratio, and the targets, set for 100M bars, are not graded"
	}
	b.logf("%s: %s (ratio %.2f, rounds %s)", sp.id, row.Status, fig.Ratio, roundList(fig.RoundRatios))
	return row, nil
}

// gradeScale holds a scale workload to its target at the large size,
// in every round as the ratio workloads are (roundsStatus, boundStatus):
// rounds on both sides of a target are within noise; with the small size
// alone it only reports.
func gradeScale(id string, fig *ScaleFigures, smallOnly bool) string {
	if smallOnly || len(fig.Sizes) == 0 {
		return "report"
	}
	large := fig.Sizes[len(fig.Sizes)-1]
	for _, sz := range fig.Sizes {
		if sz.Service.Errors > 0 || (sz.Base != nil && sz.Base.Errors > 0) {
			return "miss"
		}
	}
	var p50s, p99s, ratios []float64
	for _, r := range fig.Rounds {
		if r.Size == large.Size {
			p50s, p99s, ratios = append(p50s, r.P50Ms), append(p99s, r.P99Ms), append(ratios, r.Ratio)
		}
	}
	if len(p50s) == 0 {
		p50s, p99s, ratios = []float64{large.Service.P50Ms}, []float64{large.Service.P99Ms}, []float64{large.Ratio}
	}
	held := fig.RoundRatios
	if len(held) == 0 {
		held = []float64{fig.Ratio}
	}
	switch id {
	case "scale_eod_range":
		if fig.Ratio <= 0 {
			return "miss"
		}
		return worstStatus(boundStatus(held, 1.25), boundStatus(p99s, 50))
	case "scale_eod_latest", "scale_eod_date":
		return boundStatus(p50s, 30)
	case "scale_ticker_search":
		return boundStatus(p50s, 15)
	case "scale_exchange_tickers":
		if fig.Ratio <= 0 {
			return "miss"
		}
		return boundStatus(held, 2)
	case "scale_hit":
		return roundsStatus(ratios, 0.7)
	}
	return "miss"
}

// measureScaleHit measures scale_hit at each size: one instance serving
// the Zipf-ordered pages and the bare Gin ceiling serving one of them,
// measured back to back in rounds (BENCH_ROUNDS), as eod_hit is.
func (b *bench) measureScaleHit(ctx context.Context, sets []*scaleSet) (WorkloadResult, error) {
	b.logf("workload scale_hit")
	rounds := b.cfg.Rounds
	held := sets[len(sets)-1].size.Name
	fig := &ScaleFigures{Request: scaleHitSpec.request, Concurrency: b.cfg.Connections, Distinct: map[string]int{},
		RatioWhat: "req/s of the service over bare Gin's, " + held + " size"}
	for _, set := range sets {
		l := set.lists[scaleHitList]
		fig.Distinct[set.size.Name+" "+scaleHitList] = l.n
		if err := b.scaleStart(ctx, set, "run"); err != nil {
			return WorkloadResult{}, err
		}
		if _, err := b.startCeilingOf(ctx, "scale-"+set.size.Name+"-ceiling", [][2]string{{"/v1/eod", l.probes[0] + "&access_key=" + set.key}}); err != nil {
			b.scaleStop(set)
			return WorkloadResult{}, err
		}
		type pair struct {
			svc, gin Side
			cache    *CacheFigures
		}
		var measured []pair
		for r := range rounds {
			var p pair
			steps := []func() error{
				func() error {
					counters := b.hitCounters(ctx, set.size.db())
					side, err := b.measureHTTP(ctx, b.scaleWorkload(set, l, set.order, b.cfg.Connections, r, rounds), b.mdSvc.pid(), "marketdata-svc", counters)
					if err != nil {
						return err
					}
					p.svc, p.cache = side, cacheFigures(side.Metrics, newZipf(l.n, zipfExponent))
					p.cache.MemoryMB = mb(int64(scrapeCounters(b.mdURL("/metrics"), "marketdata_cache_memory_bytes")["marketdata_cache_memory_bytes"]))
					p.cache.RedisKeys, p.cache.RedisUsedMB = b.redisUsage(ctx)
					return nil
				},
				func() error {
					w := b.scaleWorkload(set, l, set.order, b.cfg.Connections, r, rounds)
					w.url = b.ceilingURL("")
					side, err := b.measureHTTP(ctx, w, b.ceiling.pid(), "bare Gin handler, same bytes", nil)
					p.gin = side
					return err
				},
			}
			if r%2 == 1 {
				steps[0], steps[1] = steps[1], steps[0]
			}
			for _, step := range steps {
				if err := step(); err != nil {
					b.ceiling.stop()
					b.ceiling = nil
					b.scaleStop(set)
					return WorkloadResult{}, err
				}
			}
			measured = append(measured, p)
			ratio := 0.0
			if p.gin.RPS > 0 {
				ratio = p.svc.RPS / p.gin.RPS
			}
			fig.Rounds = append(fig.Rounds, ScaleRound{Round: r + 1, Size: set.size.Name, RPS: p.svc.RPS, P50Ms: p.svc.P50Ms, P99Ms: p.svc.P99Ms,
				Errors: p.svc.Errors, BaseRPS: p.gin.RPS, BaseP50Ms: p.gin.P50Ms, Ratio: ratio})
			if set.size.Name == held {
				fig.RoundRatios = append(fig.RoundRatios, ratio)
			}
			b.logf("scale_hit %s round %d: %.0f req/s vs bare Gin %.0f: %.2f; cache hit rate %.3f (in process %.3f)",
				set.size.Name, r+1, p.svc.RPS, p.gin.RPS, ratio, p.cache.HitRate, p.cache.MemoryHitRate)
		}
		b.ceiling.stop()
		b.ceiling = nil
		b.scaleStop(set)
		med := medianRound(measured, func(p pair) float64 {
			if p.gin.RPS <= 0 {
				return 0
			}
			return p.svc.RPS / p.gin.RPS
		})
		gin := med.gin
		sz := ScaleSizeFigures{Size: set.size.Name, Service: med.svc, Base: &gin, Cache: med.cache}
		if gin.RPS > 0 {
			sz.Ratio = med.svc.RPS / gin.RPS
		}
		fig.Sizes = append(fig.Sizes, sz)
	}
	large := fig.Sizes[len(fig.Sizes)-1]
	fig.Ratio = large.Ratio
	ceiling := *large.Base
	row := WorkloadResult{ID: scaleHitSpec.id, Title: scaleHitSpec.title, TargetText: scaleHitSpec.target, Concurrency: b.cfg.Connections,
		Scale: fig, Service: large.Service, Ceiling: &ceiling, Ratio: fig.Ratio, Target: 0.7}
	smallOnly := len(sets) == 1
	row.Status = gradeScale(scaleHitSpec.id, fig, smallOnly)
	if smallOnly {
		fig.Note = "small size only (BENCH_SCALE=small): the target, set for 100M bars, is not graded"
	}
	return row, nil
}

// hitCounters are serviceCounters with Redis's GET calls, which tell the
// lookups the in-process layer answered from those that went to Redis.
func (b *bench) hitCounters(ctx context.Context, db string) func() map[string]float64 {
	svc := b.serviceCounters(ctx, "marketdata-svc", db)
	return func() map[string]float64 {
		c := svc()
		c["redis_get_calls"] = b.redisGets(ctx)
		return c
	}
}

// redisGets is the GET calls the Redis server has answered
// (INFO commandstats).
func (b *bench) redisGets(ctx context.Context) float64 {
	out, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "INFO", "commandstats"}, quiet: true})
	if err != nil {
		return 0
	}
	return commandCalls(out, "get")
}

// commandCalls reads the calls of command cmd from INFO commandstats.
func commandCalls(info, cmd string) float64 {
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(strings.SplitN(rest, ",", 2)[0], 64)
		return n
	}
	return 0
}

// redisUsage is the keys of the bench's Redis database and the memory the
// server uses.
func (b *bench) redisUsage(ctx context.Context) (keys int64, usedMB float64) {
	if out, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "DBSIZE"}, quiet: true}); err == nil {
		keys, _ = strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	}
	if out, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "INFO", "memory"}, quiet: true}); err == nil {
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				n, _ := strconv.ParseFloat(v, 64)
				usedMB = n / (1 << 20)
			}
		}
	}
	return keys, usedMB
}

// cacheFigures reads a measurement's counter differences (CacheFigures
// says how; the data version's polls add a few GETs a second).
func cacheFigures(m map[string]float64, z zipf) *CacheFigures {
	c := &CacheFigures{Hits: m["marketdata_cache_hits_total"], Misses: m["marketdata_cache_misses_total"], RedisGets: m["redis_get_calls"],
		Fallbacks: m["marketdata_cache_fallbacks_total"], Errors: m["marketdata_cache_errors_total"],
		MemoryHits: m["marketdata_cache_memory_hits_total"], ZipfTop: map[string]float64{}}
	c.Lookups = c.Hits + c.Misses
	if c.Lookups > 0 {
		c.HitRate = c.Hits / c.Lookups
		c.MemoryHitRate = c.MemoryHits / c.Lookups
	}
	for _, k := range []int{100, 1_000, 10_000} {
		c.ZipfTop[strconv.Itoa(k)] = z.top(k)
	}
	return c
}

// scalePlan is the plan of one statement a workload's request ran.
type scalePlan struct {
	Size, Request, SQL, Plan string
}

// scalePlans captures the SQL each workload's probe requests run at each
// size (log_statement, as for the pgbench ceilings) and explains every
// statement with its parameters: EXPLAIN (ANALYZE, BUFFERS) right after
// the probe, so on warm buffers.
func (b *bench) scalePlans(ctx context.Context, sets []*scaleSet, specs []scaleSpec) (map[string][]scalePlan, error) {
	out := map[string][]scalePlan{}
	for _, set := range sets {
		db := set.size.db()
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("ALTER DATABASE %s SET log_statement = 'all'", ident(db))); err != nil {
			return nil, err
		}
		var probes []probe
		for _, sp := range specs {
			l := set.lists[sp.lists[len(sp.lists)-1]] // the deep pages, for scale_exchange_tickers
			probes = append(probes, probe{workload: sp.id, db: db, send: func(ctx context.Context, i int) error {
				// Four probe requests serve the three windows and the
				// unmeasured request before each: a window's request is
				// never one sent before, so it misses the cache.
				_, err := httpCall(ctx, "GET", b.mdURL(l.probes[i%len(l.probes)]+"&access_key="+set.key), "", nil)
				return err
			}})
		}
		err := b.scaleStart(ctx, set, "probe")
		var caps map[string]captured
		if err == nil {
			caps, err = b.captureServiceProbes(ctx, probes)
		}
		b.scaleStop(set)
		if rerr := b.db.exec(ctx, "postgres", fmt.Sprintf("ALTER DATABASE %s RESET log_statement", ident(db))); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, err
		}
		for _, sp := range specs {
			l := set.lists[sp.lists[len(sp.lists)-1]]
			for _, st := range caps[sp.id].stmts {
				rows, err := b.db.query(ctx, db, explainSQL(st))
				if err != nil {
					return nil, fmt.Errorf("explain %s: %w", sp.id, err)
				}
				lines := make([]string, len(rows))
				for i, r := range rows {
					lines[i] = strings.Join(r, "\t")
				}
				out[sp.id] = append(out[sp.id], scalePlan{Size: set.size.Name, Request: l.probes[0], SQL: strings.TrimSpace(st.SQL), Plan: strings.Join(lines, "\n")})
			}
		}
	}
	return out, nil
}

// explainSQL is EXPLAIN (ANALYZE, BUFFERS) of a captured statement with
// its logged parameters, through a prepared statement so that PostgreSQL
// types them as the service's statement did.
func explainSQL(st sqlcapture.Statement) string {
	q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(st.SQL), ";"))
	if len(st.Params) == 0 {
		return "EXPLAIN (ANALYZE, BUFFERS) " + q
	}
	args := make([]string, len(st.Params))
	for i, p := range st.Params {
		args[i] = "NULL"
		if p != nil {
			args[i] = lit(*p)
		}
	}
	return "PREPARE scale_probe AS " + q + ";\nEXPLAIN (ANALYZE, BUFFERS) EXECUTE scale_probe(" + strings.Join(args, ", ") + ")"
}

// planFlags names what in the plans grows with the data or costs more
// than the query: a sequential scan of eod_bars or tickers, and JIT
// compilation (PostgreSQL compiles a statement whose estimated cost
// passes jit_above_cost, on every execution).
func planFlags(plans map[string][]scalePlan) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(plans)) {
		for _, p := range plans[id] {
			var exec string
			for _, line := range strings.Split(p.Plan, "\n") {
				if v, ok := strings.CutPrefix(line, "Execution Time: "); ok {
					exec = v
				}
			}
			for _, line := range strings.Split(p.Plan, "\n") {
				line = strings.TrimSpace(line)
				for _, t := range []string{"eod_bars", "tickers"} {
					if strings.Contains(line, "Seq Scan on "+t+" ") {
						out = append(out, fmt.Sprintf("%s, %s size: %s", id, p.Size, strings.TrimPrefix(line, "->  ")))
					}
				}
				if v, ok := strings.CutPrefix(line, "Timing: "); ok && strings.Contains(p.Plan, "JIT:") {
					out = append(out, fmt.Sprintf("%s, %s size: JIT compilation (%s) in a statement of execution time %s", id, p.Size, v, exec))
				}
			}
		}
	}
	return out
}

// renderScalePlans writes bench/scale-plans.md.
func renderScalePlans(plans map[string][]scalePlan, rev string, at time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Query plans of the scale workloads\n\nGenerated by `make bench` (bench/cmd/benchrun) at revision `%s` on %s; linked from [BENCHMARKS.md](../BENCHMARKS.md). ", rev, at.UTC().Format(time.RFC3339))
	b.WriteString("For each scale workload and size: the statements marketdata-svc ran for one probe request (captured with `log_statement = 'all'`, as for the pgbench ceilings, key lookups left out), each explained with `EXPLAIN (ANALYZE, BUFFERS)` and the same parameters, through a prepared statement (the first execution: a custom plan), right after the probe, so on warm buffers.\n\n")
	flags := planFlags(plans)
	if len(flags) > 0 {
		b.WriteString("Sequential scans of a large table (they grow with it) and JIT compilation (paid on every execution):\n\n")
		for _, f := range flags {
			b.WriteString("- " + f + "\n")
		}
		b.WriteString("\n")
	}
	for _, sp := range append(slices.Clone(scaleSpecs), scaleHitSpec) {
		ps := plans[sp.id]
		if len(ps) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", sp.id, sp.title)
		size := ""
		for _, p := range ps {
			if p.Size != size {
				size = p.Size
				fmt.Fprintf(&b, "### %s size\n\nRequest: `%s`\n\n", size, p.Request)
			}
			fmt.Fprintf(&b, "```sql\n%s\n```\n\n```\n%s\n```\n\n", p.SQL, p.Plan)
		}
	}
	return b.String()
}

// planSections splits a scale-plans document into its head and its
// workloads' sections ("## id" to the next one), by id.
func planSections(doc string) (head string, sections map[string]string) {
	parts := strings.Split(doc, "\n## ")
	sections = map[string]string{}
	for _, p := range parts[1:] {
		id, _, _ := strings.Cut(p, "\n")
		sections[id] = "## " + strings.TrimRight(p, "\n") + "\n\n"
	}
	return parts[0] + "\n", sections
}

// keptNote opens the line that marks a section kept from an earlier run;
// a section kept twice keeps its first mark, which names the revision
// that explained it.
const keptNote = "(Kept from the run at revision"

// keepPlanSections adds to fresh, a run's plans, the sections of old
// (the file an earlier run wrote) for the workloads fresh lacks, each
// marked with the revision that explained it, in the order of the
// workloads.
func keepPlanSections(fresh, old string) string {
	head, got := planSections(fresh)
	_, had := planSections(old)
	oldRev := ""
	if _, after, ok := strings.Cut(old, "at revision `"); ok {
		oldRev, _, _ = strings.Cut(after, "`")
	}
	var kept []string
	var body strings.Builder
	for _, sp := range append(slices.Clone(scaleSpecs), scaleHitSpec) {
		sec, ok := got[sp.id]
		if !ok {
			if sec, ok = had[sp.id]; !ok {
				continue
			}
			if !strings.Contains(sec, keptNote) {
				title, rest, _ := strings.Cut(sec, "\n")
				sec = title + "\n\n" + keptNote + " `" + oldRev + "`, which explained it last.)\n" + rest
			}
			kept = append(kept, sp.id)
		}
		body.WriteString(sec)
	}
	if len(kept) == 0 {
		return fresh
	}
	return strings.TrimRight(head, "\n") + "\n\nThis run explained " + strings.Join(slices.Sorted(maps.Keys(got)), ", ") +
		"; the sections of " + strings.Join(kept, ", ") + " are kept from the run at revision `" + oldRev +
		"`, and the list of flagged plans above covers this run's only.\n\n" + strings.TrimRight(body.String(), "\n") + "\n"
}

// searchRelevance sends searches drawn as scale_ticker_search draws them
// to a fresh instance on set's database and describes what comes back.
func (b *bench) searchRelevance(ctx context.Context, set *scaleSet) (SearchRelevance, error) {
	rel := SearchRelevance{Size: set.size.Name}
	if err := b.scaleStart(ctx, set, "relevance"); err != nil {
		return rel, err
	}
	defer b.scaleStop(set)
	r := scaleRand(b.cfg.Seed, set.size.Name+"/relevance")
	terms := distinct(100, func() string { return searchTerm(r, set.in) })
	var answers []searchAnswer
	for _, term := range terms {
		body, err := httpCall(ctx, "GET", b.mdURL("/v2/tickerslist?limit=10&search="+url.QueryEscape(term)+"&access_key="+set.key), "", nil)
		if err != nil {
			return rel, err
		}
		var a searchAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			return rel, fmt.Errorf("search %q: %w", term, err)
		}
		a.term = term
		answers = append(answers, a)
	}
	return relevanceOf(set.size.Name, answers, set.in), nil
}

// searchAnswer is what relevanceOf reads of a /v2/tickerslist answer.
type searchAnswer struct {
	term       string
	Pagination struct {
		Total int64 `json:"total"`
	} `json:"pagination"`
	Data []struct {
		Ticker string `json:"ticker"`
		Name   string `json:"name"`
	} `json:"data"`
}

// relevanceOf summarises the answers to searches. A term is a symbol
// prefix when some symbol starts with it (upper-cased).
func relevanceOf(size string, answers []searchAnswer, in scaleInputs) SearchRelevance {
	rel := SearchRelevance{Size: size, Queries: len(answers)}
	if len(answers) == 0 {
		return rel
	}
	var totals []int64
	var results, prefixed, symbolTerms, symbolFirst int
	for _, a := range answers {
		totals = append(totals, a.Pagination.Total)
		up := strings.ToUpper(a.term)
		isSymbol := slices.ContainsFunc(in.Tickers, func(t tickerName) bool { return strings.HasPrefix(t.Symbol, up) })
		if isSymbol {
			symbolTerms++
			if len(a.Data) > 0 && strings.HasPrefix(a.Data[0].Ticker, up) {
				symbolFirst++
			}
		}
		for _, d := range a.Data {
			results++
			if strings.HasPrefix(d.Ticker, up) || slices.ContainsFunc(strings.Fields(d.Name), func(w string) bool { return strings.HasPrefix(strings.ToUpper(w), up) }) {
				prefixed++
			}
		}
	}
	slices.Sort(totals)
	rel.MedianTotal, rel.MaxTotal = totals[len(totals)/2], totals[len(totals)-1]
	if results > 0 {
		rel.FirstPagePrefix = float64(prefixed) / float64(results)
	}
	if symbolTerms > 0 {
		rel.PrefixSymbolFirst = float64(symbolFirst) / float64(symbolTerms)
	}
	a := answers[0]
	var first []string
	for _, d := range a.Data[:min(5, len(a.Data))] {
		first = append(first, d.Ticker+" ("+d.Name+")")
	}
	rel.Example = fmt.Sprintf("search=%s: %d matches, first %s", a.term, a.Pagination.Total, strings.Join(first, ", "))
	return rel
}

// profileScale profiles a missed workload at set's size (the largest) on
// a fresh instance, as the other workloads' misses are.
func (b *bench) profileScale(ctx context.Context, set *scaleSet, id string) *Profile {
	name, conns, order := id, b.cfg.ScaleConnections, ""
	for _, sp := range scaleSpecs {
		if sp.id == id {
			name = sp.lists[len(sp.lists)-1]
		}
	}
	if id == scaleHitSpec.id {
		conns, order = b.cfg.Connections, set.order
	}
	l := set.lists[name]
	if l == nil {
		return &Profile{Error: "no request list"}
	}
	if err := b.scaleStart(ctx, set, "profile"); err != nil {
		return &Profile{Error: err.Error()}
	}
	defer b.scaleStop(set)
	prof, err := b.profile(ctx, id, "marketdata-svc", b.cfg.Ports.MarketdataPprof, b.scaleWorkload(set, l, order, conns, 0, 1))
	if err != nil {
		return &Profile{Error: err.Error()}
	}
	return prof
}
