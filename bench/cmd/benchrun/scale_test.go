package main

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/bench/internal/loadgen"
	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// testInputs is a small universe: 300 symbols with bars of 1,000 tickers
// on 5 exchanges, two years of trading days.
func testInputs() scaleInputs {
	var in scaleInputs
	words := []string{"Harbor", "Alder", "Copper", "Mining", "Holdings", "Corp"}
	for i := range 1000 {
		sym := fmt.Sprintf("%c%c%c%c", 'A'+i%26, 'A'+i/26%26, 'A'+i/676%26, 'Q')
		in.Tickers = append(in.Tickers, tickerName{Symbol: sym, Name: words[i%3] + " " + words[3+i%2] + " " + words[5]})
		if i < 300 {
			in.Symbols = append(in.Symbols, sym)
		}
	}
	in.Exchanges = []exchangeCount{{"SYN01", 500}, {"SYN02", 300}, {"SYN03", 100}, {"SYN04", 60}, {"SYN05", 40}}
	in.Days = weekdays(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))
	return in
}

func queryOf(t *testing.T, path string) (string, url.Values) {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path, u.Query()
}

// The same seed and name give the same requests, another name others,
// and a list holds no request twice.
func TestScaleRequestsAreSeededAndDistinct(t *testing.T) {
	in := testInputs()
	gen := func(seed int, name string) []string {
		r := scaleRand(seed, name)
		return distinct(2000, func() string { return eodRangeRequest(r, in) })
	}
	a, b := gen(42, "small/scale_eod_range"), gen(42, "small/scale_eod_range")
	if !slices.Equal(a, b) || len(a) != 2000 {
		t.Fatalf("lists of %d and %d differ", len(a), len(b))
	}
	if c := gen(42, "large/scale_eod_range"); slices.Equal(a[:50], c[:50]) {
		t.Fatal("another name gave the same requests")
	}
	if c := gen(43, "small/scale_eod_range"); slices.Equal(a[:50], c[:50]) {
		t.Fatal("another seed gave the same requests")
	}
	seen := map[string]bool{}
	for _, q := range a {
		if seen[q] {
			t.Fatalf("%q twice", q)
		}
		seen[q] = true
	}
	// A space smaller than asked for ends the list, not the run.
	r := scaleRand(1, "x")
	if got := distinct(100, func() string { return strconv.Itoa(r.IntN(7)) }); len(got) != 7 {
		t.Fatalf("%d distinct of 7 possible", len(got))
	}
}

// Each workload's request asks what its row says it does.
func TestScaleRequestShapes(t *testing.T) {
	in := testInputs()
	r := scaleRand(7, "shapes")
	last := in.Days[len(in.Days)-1]
	bars := map[string]bool{}
	for _, s := range in.Symbols {
		bars[s] = true
	}
	symbolsOK := func(v string, lo, hi int) bool {
		syms := strings.Split(v, ",")
		seen := map[string]bool{}
		for _, s := range syms {
			if !bars[s] || seen[s] {
				return false
			}
			seen[s] = true
		}
		return len(syms) >= lo && len(syms) <= hi
	}
	for range 500 {
		path, q := queryOf(t, eodRangeRequest(r, in))
		from, err1 := time.Parse(time.DateOnly, q.Get("date_from"))
		to, err2 := time.Parse(time.DateOnly, q.Get("date_to"))
		if path != "/v1/eod" || q.Get("limit") != "100" || !symbolsOK(q.Get("symbols"), 1, 5) || err1 != nil || err2 != nil ||
			!to.Equal(from.AddDate(1, 0, -1)) || to.After(last) || from.Weekday() == time.Saturday || from.Weekday() == time.Sunday {
			t.Fatalf("range request %s %v", path, q)
		}
		if path, q = queryOf(t, eodLatestRequest(r, in)); path != "/v1/eod/latest" || !symbolsOK(q.Get("symbols"), 100, 100) {
			t.Fatalf("latest request %s %v", path, q)
		}
		path, q = queryOf(t, eodDateRequest(r, in))
		d, err := time.Parse(time.DateOnly, strings.TrimPrefix(path, "/v1/eod/"))
		if err != nil || !slices.ContainsFunc(in.Days, d.Equal) || !symbolsOK(q.Get("symbols"), 100, 100) {
			t.Fatalf("date request %s %v", path, q)
		}
		if path, q = queryOf(t, hitRequest(r, in)); path != "/v1/eod" || !symbolsOK(q.Get("symbols"), 2, 2) || q.Get("limit") != "100" {
			t.Fatalf("hit request %s %v", path, q)
		}
	}
	prefixes, words := 0, 0
	for range 1000 {
		path, q := queryOf(t, searchRequest(r, in))
		term := q.Get("search")
		limit, _ := strconv.Atoi(q.Get("limit"))
		if path != "/v2/tickerslist" || limit < 51 || limit > 100 || term != strings.ToLower(term) {
			t.Fatalf("search request %s %v", path, q)
		}
		switch {
		case term == "corp":
			t.Fatal("the legal suffix is searched for")
		case slices.Contains([]string{"harbor", "alder", "copper", "mining", "holdings"}, term):
			words++
		case len(term) == 3 && slices.ContainsFunc(in.Tickers, func(x tickerName) bool { return strings.HasPrefix(x.Symbol, strings.ToUpper(term)) }):
			prefixes++
		default:
			t.Fatalf("search term %q is neither a symbol's prefix nor a word of a name", term)
		}
	}
	if prefixes < 400 || words < 400 {
		t.Fatalf("%d prefixes and %d words of 1000: want about half each", prefixes, words)
	}
}

// Deep pages start at the offset, on exchanges that list past it; pages
// at offset 0-99 on the same exchanges.
func TestScaleExchangeRequests(t *testing.T) {
	in := testInputs()
	if got := deepOffset(170_000); got != 10_000 {
		t.Fatalf("deep offset at 170,000 tickers: %d", got)
	}
	if got := deepOffset(5_000); got != 294 {
		t.Fatalf("deep offset at 5,000 tickers: %d", got)
	}
	xs, off := deepExchanges(in, 150)
	if off != 150 || len(xs) != 2 || xs[0].MIC != "SYN01" || xs[1].MIC != "SYN02" {
		t.Fatalf("exchanges %v at %d", xs, off)
	}
	if xs, off := deepExchanges(in, 10_000); len(xs) != 1 || off != 250 {
		t.Fatalf("too deep for all: %v at %d, want the largest at half its listings", xs, off)
	}
	r := scaleRand(3, "exchanges")
	for range 1000 {
		for _, deep := range []bool{false, true} {
			path, q := queryOf(t, exchangeRequest(r, xs, off, deep))
			offset, _ := strconv.Atoi(q.Get("offset"))
			limit, _ := strconv.Atoi(q.Get("limit"))
			mic := strings.TrimSuffix(strings.TrimPrefix(path, "/v1/exchanges/"), "/tickers")
			i := slices.IndexFunc(xs, func(x exchangeCount) bool { return x.MIC == mic })
			if i < 0 || limit < 51 || limit > 100 {
				t.Fatalf("request %s %v", path, q)
			}
			if deep && (offset < off || offset+limit > xs[i].Tickers) || !deep && offset > 99 {
				t.Fatalf("deep %v: offset %d limit %d on %v", deep, offset, limit, xs[i])
			}
		}
	}
}

// Ranks are drawn in proportion to 1/rank, and top tells the share a
// cache of the k most requested pages could hit.
func TestZipf(t *testing.T) {
	z := newZipf(1000, 1)
	h := 0.0
	for k := 1; k <= 1000; k++ {
		h += 1 / float64(k)
	}
	if got := z.top(1); math.Abs(got-1/h) > 1e-9 {
		t.Fatalf("top(1) = %v, want %v", got, 1/h)
	}
	if z.top(1000) != 1 || z.top(2000) != 1 || z.top(0) != 0 || z.top(10) <= z.top(9) {
		t.Fatal("top is not a cumulative share")
	}
	r := scaleRand(1, "zipf")
	counts := make([]int, 1000)
	const n = 200_000
	for range n {
		counts[z.draw(r)]++
	}
	for _, k := range []int{0, 1, 9} {
		want := n / float64(k+1) / h
		if got := float64(counts[k]); math.Abs(got-want) > 0.05*want {
			t.Fatalf("rank %d drawn %v times, want about %v", k, got, want)
		}
	}
	r1, r2 := scaleRand(1, "zipf"), scaleRand(1, "zipf")
	for range 100 {
		if z.draw(r1) != z.draw(r2) {
			t.Fatal("the same seed drew other ranks")
		}
	}
}

// A scale workload is graded at the large size only, by its own target.
func TestGradeScale(t *testing.T) {
	fig := func(ratio float64, sizes ...Side) *ScaleFigures {
		f := &ScaleFigures{Ratio: ratio}
		for i, s := range sizes {
			f.Sizes = append(f.Sizes, ScaleSizeFigures{Size: []string{"small", "large"}[i], Service: s, Ratio: ratio})
		}
		return f
	}
	side := func(p50, p99 float64) Side { return Side{Measurement: loadgen.Measurement{P50Ms: p50, P99Ms: p99}} }
	for _, tc := range []struct {
		id        string
		fig       *ScaleFigures
		smallOnly bool
		want      string
	}{
		{"scale_eod_range", fig(1.2, side(2, 10), side(2.4, 40)), false, "pass"},
		{"scale_eod_range", fig(1.3, side(2, 10), side(2.6, 40)), false, "miss"},
		{"scale_eod_range", fig(1.1, side(2, 10), side(2.2, 60)), false, "miss"},
		{"scale_eod_latest", fig(5, side(2, 10), side(29, 90)), false, "pass"},
		{"scale_eod_date", fig(5, side(2, 10), side(31, 90)), false, "miss"},
		{"scale_ticker_search", fig(1, side(14, 50), side(16, 50)), false, "miss"},
		{"scale_exchange_tickers", fig(1.9, side(2, 10), side(2, 10)), false, "pass"},
		{"scale_hit", fig(0.71, side(1, 5), side(1, 5)), false, "pass"},
		{"scale_hit", fig(0.5, side(1, 5), side(1, 5)), false, "miss"},
		{"scale_eod_latest", fig(0, side(100, 200)), true, "report"},
	} {
		if got := gradeScale(tc.id, tc.fig, tc.smallOnly); got != tc.want {
			t.Errorf("%s %+v: %s, want %s", tc.id, tc.fig.Sizes, got, tc.want)
		}
	}
	errs := fig(1, side(2, 10), side(2, 10))
	errs.Sizes[0].Service.Errors = 3
	if gradeScale("scale_eod_range", errs, false) != "miss" {
		t.Error("errors at the small size must fail the row")
	}
}

// BENCH_WORKLOADS=scale names every scale workload, and only those.
func TestWantScale(t *testing.T) {
	b := &bench{cfg: config{Only: map[string]bool{"scale": true}}}
	for _, id := range scaleIDs {
		if !b.want(id) {
			t.Errorf("scale does not select %s", id)
		}
	}
	if b.want("eod_hit") || b.want("tenant_scale") {
		t.Error("scale selects other workloads")
	}
	b.cfg.Only = map[string]bool{"scale_hit": true}
	if !b.wantScale() || b.want("scale_eod_range") || len(b.wantedScaleSpecs()) != 1 {
		t.Error("one scale workload selects the others")
	}
}

func TestExplainSQL(t *testing.T) {
	v := "{A,B}"
	got := explainSQL(sqlcapture.Statement{SQL: "SELECT * FROM t WHERE s = ANY($1) AND x = $2 ;", Params: []*string{&v, nil}})
	want := "PREPARE scale_probe AS SELECT * FROM t WHERE s = ANY($1) AND x = $2;\nEXPLAIN (ANALYZE, BUFFERS) EXECUTE scale_probe('{A,B}', NULL)"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	o := "it's"
	if got := explainSQL(sqlcapture.Statement{SQL: "SELECT $1", Params: []*string{&o}}); !strings.HasSuffix(got, "EXECUTE scale_probe('it''s')") {
		t.Fatalf("quoting: %s", got)
	}
	if got := explainSQL(sqlcapture.Statement{SQL: "SELECT 1"}); got != "EXPLAIN (ANALYZE, BUFFERS) SELECT 1" {
		t.Fatalf("no parameters: %s", got)
	}
}

func TestPlanFlags(t *testing.T) {
	plans := map[string][]scalePlan{
		"scale_ticker_search": {{Size: "large", Plan: "Limit\n  ->  Parallel Seq Scan on tickers t  (cost=0.00..1.00 rows=1 width=8) (actual time=0.1..9.0 rows=5 loops=3)"}},
		"scale_eod_range":     {{Size: "large", Plan: "Index Scan using eod_bars_pkey on eod_bars b\n  ->  Seq Scan on exchanges e"}},
	}
	got := planFlags(plans)
	if len(got) != 1 || !strings.HasPrefix(got[0], "scale_ticker_search, large size: Parallel Seq Scan on tickers t") {
		t.Fatalf("flags %q", got)
	}
	plans["scale_eod_latest"] = []scalePlan{{Size: "small", Plan: "Nested Loop\nJIT:\n  Functions: 19\n  Timing: Generation 5.953 ms, Total 490.605 ms\nExecution Time: 710.513 ms"}}
	if got := planFlags(plans); len(got) != 2 || got[0] != "scale_eod_latest, small size: JIT compilation (Generation 5.953 ms, Total 490.605 ms) in a statement of execution time 710.513 ms" {
		t.Fatalf("flags %q", got)
	}
}

func TestCommandCallsAndCacheFigures(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_getex:calls=9,usec=1\r\ncmdstat_get:calls=1234,usec=5678,usec_per_call=4.60\r\ncmdstat_evalsha:calls=77,usec=1\r\n"
	if got := commandCalls(info, "get"); got != 1234 {
		t.Fatalf("get calls %v", got)
	}
	if got := commandCalls(info, "set"); got != 0 {
		t.Fatalf("set calls %v", got)
	}
	c := cacheFigures(map[string]float64{"marketdata_cache_hits_total": 900, "marketdata_cache_misses_total": 100, "marketdata_cache_memory_hits_total": 600, "redis_get_calls": 400}, newZipf(100, 1))
	if c.Lookups != 1000 || c.HitRate != 0.9 || c.MemoryHitRate != 0.6 || c.ZipfTop["100"] != 1 {
		t.Fatalf("%+v", c)
	}
	// No memory counter (a service from before it): no memory hits.
	c = cacheFigures(map[string]float64{"marketdata_cache_hits_total": 5362, "marketdata_cache_misses_total": 3540}, newZipf(100, 1))
	if c.MemoryHits != 0 || c.MemoryHitRate != 0 {
		t.Fatalf("%+v", c)
	}
}

func TestRelevanceOf(t *testing.T) {
	in := scaleInputs{Tickers: []tickerName{{"ABCD", "Harbor Mining Corp"}, {"XABC", "Alder Copper Inc"}, {"QQQ", "Copper Harbor Co"}}}
	answer := func(term string, total int64, items ...[2]string) searchAnswer {
		a := searchAnswer{term: term}
		a.Pagination.Total = total
		for _, it := range items {
			a.Data = append(a.Data, struct {
				Ticker string `json:"ticker"`
				Name   string `json:"name"`
			}{it[0], it[1]})
		}
		return a
	}
	rel := relevanceOf("small", []searchAnswer{
		answer("abc", 2, [2]string{"ABCD", "Harbor Mining Corp"}, [2]string{"XABC", "Alder Copper Inc"}),
		answer("xab", 1, [2]string{"XABC", "Alder Copper Inc"}),
		answer("copper", 2, [2]string{"QQQ", "Copper Harbor Co"}, [2]string{"XABC", "Alder Copper Inc"}),
	}, in)
	if rel.Queries != 3 || rel.MedianTotal != 2 || rel.MaxTotal != 2 {
		t.Fatalf("%+v", rel)
	}
	// 4 of 5 results start with the term (XABC for "abc" does not); both
	// symbol prefixes come first.
	if rel.FirstPagePrefix != 0.8 || rel.PrefixSymbolFirst != 1 || !strings.Contains(rel.Example, "search=abc: 2 matches, first ABCD") {
		t.Fatalf("%+v", rel)
	}
}

func TestStorageOrder(t *testing.T) {
	got := storageOrder([][]string{{"tickers_pkey", "tickers", "10"}, {"eod_bars", "", "1000"}, {"tickers", "", "50"},
		{"eod_bars_pkey", "eod_bars", "300"}, {"tickers_exchange_symbol_idx", "tickers", "20"}, {"other", "", "5"}})
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	if strings.Join(names, " ") != "eod_bars eod_bars_pkey tickers tickers_exchange_symbol_idx tickers_pkey" || got[1].Bytes != 300 || !got[1].Index || got[0].Index {
		t.Fatalf("%+v", got)
	}
}

// The scale rows render with both sizes, their targets and the link to
// the plans; a subset run replaces them and the scale section.
func TestRenderScale(t *testing.T) {
	side := func(rps, p50, p99 float64) Side {
		return Side{Measurement: loadgen.Measurement{RPS: rps, P50Ms: p50, P99Ms: p99}, What: "marketdata-svc"}
	}
	gin := side(9000, 1, 3)
	rangeRow := WorkloadResult{ID: "scale_eod_range", Title: "range", TargetText: "p50 ratio large/small ≤ 1.25; p99 ≤ 50 ms", Status: "miss",
		Service: side(300, 6.5, 61), Ratio: 1.3,
		Scale: &ScaleFigures{Concurrency: 2, Ratio: 1.3, RatioWhat: "p50 large over small", RoundRatios: []float64{1.2, 1.3, 1.4},
			Distinct: map[string]int{"small scale_eod_range": 60000, "large scale_eod_range": 60000},
			Sizes:    []ScaleSizeFigures{{Size: "small", Service: side(400, 5, 20)}, {Size: "large", Service: side(300, 6.5, 61)}},
			Rounds:   []ScaleRound{{Round: 1, Size: "small", P50Ms: 5, P99Ms: 20}, {Round: 1, Size: "large", P50Ms: 6.5, P99Ms: 61}}}}
	hitRow := WorkloadResult{ID: "scale_hit", Title: "hit", TargetText: "≥ 0.7× of bare Gin", Status: "pass", Service: side(7000, 1, 4), Ceiling: &gin, Ratio: 0.78,
		Scale: &ScaleFigures{Concurrency: 16, Ratio: 0.78, Distinct: map[string]int{}, Sizes: []ScaleSizeFigures{
			{Size: "large", Service: side(7000, 1, 4), Base: &gin, Ratio: 0.78, Cache: &CacheFigures{Lookups: 1000, HitRate: 0.9, MemoryHitRate: 0.55, ZipfTop: map[string]float64{"100": 0.4}}}}}}
	run := &ScaleRun{Rounds: 3, Concurrency: 2, HitRounds: 9, PlansFile: "bench/scale-plans.md",
		Datasets: []ScaleDataset{
			{Size: "small", DB: "bench_scale_small", Bars: 1_043_600, BytesPerBar: 150, Storage: []Relation{{Name: "eod_bars", Table: "eod_bars", Bytes: 120 << 20}, {Name: "eod_bars_pkey", Table: "eod_bars", Index: true, Bytes: 30 << 20}}},
			{Size: "large", DB: "bench_scale_large", Bars: 104_360_000, BytesPerBar: 151, Storage: []Relation{{Name: "eod_bars", Table: "eod_bars", Bytes: 12000 << 20}, {Name: "eod_bars_pkey", Table: "eod_bars", Index: true, Bytes: 3000 << 20}}},
		},
		Memory:    []MemoryResult{{Service: "marketdata-svc, scale large", VmHWMMB: 120, TargetMB: 250, Status: "pass"}},
		PlanFlags: []string{"scale_ticker_search, large size: Seq Scan on tickers t"},
	}
	full := Results{GitRevision: "full1", Workloads: []WorkloadResult{{ID: "eod_hit", Title: "eod", Ceiling: &Side{}, Ratio: 0.8}}}
	sub := Results{GitRevision: "sub2", Workloads: []WorkloadResult{rangeRow, hitRow}, Scale: run}
	got := mergeRerun(full, sub)
	if got.Scale != run || len(got.Workloads) != 3 || !slices.Contains(got.Reruns[0].Workloads, "scale") {
		t.Fatalf("merged: %+v", got.Reruns)
	}
	md := renderMarkdown(got, "")
	for _, want := range []string{
		"| scale_eod_range: range (large size, 2 connections) (measured again at `sub2`) | 300 | 6.50 | 61.00 | 0 | same requests, small size | 400 | 5.00 / 20.00 | 1.30× | p50 ratio large/small ≤ 1.25; p99 ≤ 50 ms | **MISS** |",
		"| scale_hit: hit (large size, 16 connections) (measured again at `sub2`) | 7000 | 1.00 | 4.00 | 0 | bare Gin, same bytes | 9000 |",
		"| resident memory of marketdata-svc, scale large during the scale workloads | VmHWM 120.0 MB |",
		"### Scale: marketstack-sized data",
		"| table `eod_bars` | 120.0 MB | 12000.0 MB |",
		"| index `eod_bars_pkey` on eod_bars | 30.0 MB | 3000.0 MB |",
		"| scale_eod_range | large | 300 | 6.50 | 61.00 | 0 |  |  |  | scale_eod_range 60000 |",
		"Held ratio (p50 large over small) per round: 1.20, 1.30, 1.40; median 1.30×",
		"| large | 1000 | 0.900 | 0.550 |",
		"[bench/scale-plans.md](bench/scale-plans.md)",
		"- scale_ticker_search, large size: Seq Scan on tickers t",
		"scale_eod_range (large)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	// The small size alone: the row says there is no ratio.
	small := rangeRow
	small.Scale = &ScaleFigures{Concurrency: 2, Note: "small size only (BENCH_SCALE=small): no large/small ratio", Sizes: rangeRow.Scale.Sizes[:1]}
	small.Status = "report"
	if row := scaleResultRow(small); !strings.Contains(row, "(small size, 2 connections)") || !strings.Contains(row, "| – |") || !strings.Contains(row, "no large/small ratio") {
		t.Fatalf("small-only row: %s", row)
	}
}

// A subset run's plans replace only the sections of the workloads it ran;
// the others stay, marked with the revision that explained them.
func TestKeepPlanSections(t *testing.T) {
	old := "# Query plans\n\nGenerated at revision `old1` on a day.\n\n## scale_eod_range\n\nrange\n\n```\nold range plan\n```\n\n## scale_exchange_tickers\n\nlisting\n\n```\nold listing plan\n```\n"
	fresh := "# Query plans\n\nGenerated at revision `new2` on a day.\n\n## scale_exchange_tickers\n\nlisting\n\n```\nnew listing plan\n```\n"
	got := keepPlanSections(fresh, old)
	for _, want := range []string{"revision `new2`", "new listing plan", "old range plan", "(Kept from the run at revision `old1`, which explained it last.)"} {
		if !strings.Contains(got, want) {
			t.Errorf("merged plans lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old listing plan") {
		t.Errorf("the re-explained section kept its old plan:\n%s", got)
	}
	if strings.Index(got, "## scale_eod_range") > strings.Index(got, "## scale_exchange_tickers") {
		t.Errorf("sections out of the workloads' order:\n%s", got)
	}
	// Merged again by a later run, a kept section keeps its first mark.
	again := keepPlanSections(strings.ReplaceAll(fresh, "new2", "new3"), got)
	if strings.Count(again, "(Kept from") != 1 || !strings.Contains(again, "revision `old1`, which explained it last") {
		t.Errorf("kept twice:\n%s", again)
	}
	if keepPlanSections(fresh, fresh) != fresh {
		t.Errorf("a run that explained every section changed its own document")
	}
}

// A scale target is held in every round at the large size: rounds on
// both sides of it are within noise, as for the ratio workloads.
func TestGradeScaleHoldsEveryRound(t *testing.T) {
	fig := func(ratios []float64, p50s, p99s []float64) *ScaleFigures {
		f := &ScaleFigures{RoundRatios: ratios, Sizes: []ScaleSizeFigures{{Size: "small"}, {Size: "large"}}}
		if len(ratios) > 0 {
			f.Ratio = slices.Sorted(slices.Values(ratios))[len(ratios)/2]
		}
		for i := range p50s {
			f.Rounds = append(f.Rounds, ScaleRound{Round: i + 1, Size: "small", P50Ms: 1, P99Ms: 2},
				ScaleRound{Round: i + 1, Size: "large", P50Ms: p50s[i], P99Ms: p99s[i]})
		}
		return f
	}
	for _, tc := range []struct {
		id   string
		fig  *ScaleFigures
		want string
	}{
		{"scale_eod_range", fig([]float64{1.2, 1.21, 1.1}, []float64{5, 5, 5}, []float64{20, 30, 40}), "pass"},
		{"scale_eod_range", fig([]float64{1.34, 1.21, 1.20}, []float64{5, 5, 5}, []float64{20, 30, 40}), "within noise"},
		{"scale_eod_range", fig([]float64{1.2, 1.21, 1.1}, []float64{5, 5, 5}, []float64{20, 60, 70}), "miss"},
		{"scale_eod_date", fig(nil, []float64{5, 4, 31}, []float64{9, 9, 40}), "within noise"},
		{"scale_eod_latest", fig(nil, []float64{12, 13, 12}, []float64{20, 20, 20}), "pass"},
		{"scale_ticker_search", fig(nil, []float64{16, 20, 3}, []float64{20, 20, 20}), "miss"},
	} {
		if got := gradeScale(tc.id, tc.fig, false); got != tc.want {
			t.Errorf("%s %+v: %s, want %s", tc.id, tc.fig.Rounds, got, tc.want)
		}
	}
}
