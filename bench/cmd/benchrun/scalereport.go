package main

import (
	"fmt"
	"slices"
	"strings"
)

// scaleBaseName names what a scale row's ratio compares the service with.
func scaleBaseName(x WorkloadResult) string {
	switch {
	case x.ID == scaleHitSpec.id:
		return "bare Gin, same bytes"
	case x.ID == "scale_exchange_tickers":
		return "pages at offset 0–99, same size"
	}
	return "same requests, small size"
}

// scaleResultRow is a scale workload's row of the Results table: the held
// size's service (the large one's, the small one's when it ran alone)
// beside what its ratio compares it with.
func scaleResultRow(x WorkloadResult) string {
	fig := x.Scale
	held := fig.Sizes[len(fig.Sizes)-1]
	var base *Side
	switch {
	case held.Base != nil:
		base = held.Base
	case len(fig.Sizes) > 1:
		base = &fig.Sizes[0].Service
	}
	title := fmt.Sprintf("%s: %s (%s size, %d connections)", x.ID, x.Title, held.Size, fig.Concurrency)
	if x.Rerun != "" {
		title += " (measured again at `" + x.Rerun + "`)"
	}
	baseName, baseRPS, baseLat, ratio := "–", "", "", "–"
	if base != nil {
		baseName, baseRPS, baseLat = scaleBaseName(x), f0(base.RPS), f2(base.P50Ms)+" / "+f2(base.P99Ms)
	}
	if fig.Ratio > 0 {
		ratio = f2(fig.Ratio) + "×"
	}
	status := statusText(x.Status)
	if fig.Note != "" {
		status += " (" + fig.Note + ")"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | | |\n", title, f0(x.Service.RPS), f2(x.Service.P50Ms), f2(x.Service.P99Ms),
		x.Service.Errors, baseName, baseRPS, baseLat, ratio, x.TargetText, status)
}

// mib writes a byte count in MB.
func mib(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// renderScale writes the scale section of BENCHMARKS.md.
func renderScale(w func(string, ...any), sc *ScaleRun, workloads []WorkloadResult) {
	w("### Scale: marketstack-sized data (scale_*)\n\n")
	w("The EOD, ticker and exchange reads at 100M bars and 170,000 tickers on 70 exchanges (`bench_scale_large`) and at a hundredth of the bars (`bench_scale_small`: 1M bars, 5,000 tickers), both made by `marketdata-svc generate --universe` with the same seed and kept between runs (`BENCH_FRESH=1` reloads). ")
	w("Each measurement starts a fresh marketdata-svc on one size's database with an empty Redis database, and walks a list of distinct requests drawn by a seeded generator from what that database holds (the warm-up and each round on their own part of it), so that every request is a cache miss; the rounds (%d) alternate the sizes, and the table shows the median round. ", sc.Rounds)
	w("The latency workloads run at %d connections: their targets are latencies of one request, and at 16 connections on 2 cores a p50 is mostly the queue. scale_hit runs as eod_hit does, at BENCH_CONNECTIONS against bare Gin, in %d rounds.", sc.Concurrency, sc.HitRounds)
	if sc.Only != "" {
		w(" **This run measured the small size alone (BENCH_SCALE=small): no large/small ratio, and no target graded.**")
	}
	w("\n\n")

	w("| size | database | bars | symbols with bars | tickers | exchanges | splits | dividends | trading days | dataset |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, ds := range sc.Datasets {
		how := fmt.Sprintf("reused (checked in %.1f s)", ds.CheckSeconds)
		if ld := ds.Load; ld != nil {
			var idx []string
			for _, ix := range ld.Indexes {
				idx = append(idx, fmt.Sprintf("%s %.1f s", ix.Name, ix.Seconds))
			}
			how = fmt.Sprintf("loaded in %.0f s (%.0f bars/s): generate %.1f s (`%s`), indexes %.1f s (%s), VACUUM (FREEZE, ANALYZE) and CHECKPOINT %.1f s; load average %s before, %s after. %s",
				ld.Seconds, ld.BarsPerSecond, ld.GenerateSeconds, strings.ReplaceAll(ld.GenerateOutput, "\n", " / "), ld.IndexSeconds, strings.Join(idx, ", "),
				ld.VacuumSeconds, ld.LoadAvgBefore, ld.LoadAvgAfter, ld.SchemaCheck)
		}
		w("| %s | `%s` | %d | %d | %d | %d | %d | %d | %s to %s | %s; %.0f%% of eod_bars' pages all-visible |\n", ds.Size, ds.DB, ds.Bars, ds.Symbols, ds.Tickers, ds.Exchanges, ds.Splits, ds.Dividends, ds.DateFrom, ds.DateTo, how, 100*ds.AllVisible)
	}
	w("\nA load migrates the database, drops the primary key of `eod_bars` and the secondary indexes of `tickers`, streams every bar through `generate`'s binary COPY (one transaction, ending with VACUUM ANALYZE), builds the dropped indexes again under their own names (`maintenance_work_mem` 1 GB, parallel workers), runs VACUUM (FREEZE, ANALYZE) once the commit is flushed (generate's own VACUUM, right after an asynchronous commit, leaves the pages without the all-visible mark that index-only scans need) and a checkpoint, and compares `\\d+` of every table with a freshly migrated database.\n\n")

	w("**Storage** (`pg_table_size` of each table, heap with TOAST and maps; `pg_relation_size` of each index):\n\n| relation |")
	for _, ds := range sc.Datasets {
		w(" %s |", ds.Size)
	}
	w("\n|---|")
	for range sc.Datasets {
		w("---:|")
	}
	w("\n")
	for i, rel := range sc.Datasets[0].Storage {
		name := "table `" + rel.Name + "`"
		if rel.Index {
			name = "index `" + rel.Name + "` on " + rel.Table
		}
		w("| %s |", name)
		for _, ds := range sc.Datasets {
			if i < len(ds.Storage) && ds.Storage[i].Name == rel.Name {
				w(" %s |", mib(ds.Storage[i].Bytes))
			} else {
				w(" – |")
			}
		}
		w("\n")
	}
	w("| **bytes per bar** (eod_bars heap + its index) |")
	for _, ds := range sc.Datasets {
		w(" %.1f + %.1f = %.1f |", ds.HeapBytesPerBar, ds.IndexBytesPerBar, ds.BytesPerBar)
	}
	w("\n| whole database |")
	for _, ds := range sc.Datasets {
		w(" %s |", mib(ds.DatabaseBytes))
	}
	w("\n\n")

	w("**Each size** (the median round; the comparison is the pages at offset 0–99 for scale_exchange_tickers, bare Gin for scale_hit):\n\n")
	w("| workload | size | req/s | p50 ms | p99 ms | errors | compared with: req/s | p50 / p99 ms | ratio | distinct requests |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	var rounds, notes []string
	for _, x := range workloads {
		fig := x.Scale
		if fig == nil {
			continue
		}
		for _, sz := range fig.Sizes {
			var lists []string
			for k, n := range fig.Distinct {
				if name, ok := strings.CutPrefix(k, sz.Size+" "); ok {
					lists = append(lists, fmt.Sprintf("%s %d", name, n))
				}
			}
			slices.Sort(lists)
			cRPS, cLat, ratio := "", "", ""
			if sz.Base != nil {
				cRPS, cLat, ratio = f0(sz.Base.RPS), f2(sz.Base.P50Ms)+" / "+f2(sz.Base.P99Ms), f2(sz.Ratio)+"×"
			}
			w("| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", x.ID, sz.Size, f0(sz.Service.RPS), f2(sz.Service.P50Ms), f2(sz.Service.P99Ms), sz.Service.Errors,
				cRPS, cLat, ratio, strings.Join(lists, ", "))
		}
		var rs []string
		for _, r := range fig.Rounds {
			s := fmt.Sprintf("%d %s p50 %s / p99 %s ms", r.Round, r.Size, f2(r.P50Ms), f2(r.P99Ms))
			if r.BaseRPS > 0 {
				s += fmt.Sprintf(" (compared: %s req/s, p50 %s ms, ratio %s×)", f0(r.BaseRPS), f2(r.BaseP50Ms), f2(r.Ratio))
			}
			rs = append(rs, s)
		}
		line := fmt.Sprintf("- %s: %s", x.ID, strings.Join(rs, "; "))
		if len(fig.RoundRatios) > 0 && fig.RatioWhat != "" {
			line += fmt.Sprintf(". Held ratio (%s) per round: %s; median %s×", fig.RatioWhat, roundList(fig.RoundRatios), f2(fig.Ratio))
		}
		rounds = append(rounds, line)
		for _, rep := range fig.Repeats {
			notes = append(notes, fmt.Sprintf("- %s: %s; a repeated request may have been a cache hit.", x.ID, rep))
		}
	}
	w("\nRequests: ")
	var reqs []string
	for _, x := range workloads {
		if x.Scale != nil {
			reqs = append(reqs, fmt.Sprintf("%s: %s", x.ID, x.Scale.Request))
		}
	}
	w("%s.\n\nRounds:\n\n%s\n\n", strings.Join(reqs, "; "), strings.Join(rounds, "\n"))
	if len(notes) > 0 {
		w("%s\n\n", strings.Join(notes, "\n"))
	}

	for _, x := range workloads {
		if x.ID != scaleHitSpec.id || x.Scale == nil {
			continue
		}
		w("**scale_hit's cache** over the median round's measurement: every EOD lookup counts as a hit or a miss (`marketdata_cache_hits_total`, `marketdata_cache_misses_total`); one the in-process layer did not answer made one Redis GET (`INFO commandstats`, with the data version's few polls a second) unless Redis was being bypassed after an error (fallbacks that are not errors), and the in-process hits and bytes are the service's own (`marketdata_cache_memory_hits_total`, `marketdata_cache_memory_bytes`, bounded at 16 MB); Redis's keys and memory are the shared layer's (the bench stack's Redis keeps at most 256 MB, with LRU eviction).\n\n")
		w("| size | lookups | hit rate | in-process hit rate | Redis GETs | fallbacks / errors | in-process bytes | Redis keys | Redis memory | share of requests to the 100 / 1,000 / 10,000 most requested pages |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, sz := range x.Scale.Sizes {
			if c := sz.Cache; c != nil {
				w("| %s | %.0f | %.3f | %.3f | %.0f | %.0f / %.0f | %.1f MB | %d | %.1f MB | %.2f / %.2f / %.2f |\n", sz.Size, c.Lookups, c.HitRate, c.MemoryHitRate, c.RedisGets,
					c.Fallbacks, c.Errors, c.MemoryMB, c.RedisKeys, c.RedisUsedMB, c.ZipfTop["100"], c.ZipfTop["1000"], c.ZipfTop["10000"])
			}
		}
		w("\n")
	}
	if len(sc.Relevance) > 0 {
		w("**Relevance of the ticker search.** `search=` matches a substring of the symbol or the name (`ILIKE '%%term%%'`, trigram indexes) and orders the matches by symbol, not by relevance. Over 100 searches drawn as the workload draws them, 10 results each:\n\n")
		w("| size | searches | median / most matches | first-page results starting with the term (symbol or a word of the name) | symbol-prefix searches whose first result starts with it | example |\n|---|---:|---:|---:|---:|---|\n")
		for _, r := range sc.Relevance {
			w("| %s | %d | %d / %d | %.2f | %.2f | %s |\n", r.Size, r.Queries, r.MedianTotal, r.MaxTotal, r.FirstPagePrefix, r.PrefixSymbolFirst, r.Example)
		}
		w("\n")
	}
	w("**Memory:** the highest VmHWM of the size's marketdata-svc instances over the scale workloads (target < %d MB):", scaleMemoryMB)
	for _, m := range sc.Memory {
		w(" %s %.1f MB (max VmRSS sampled under load %.1f MB) %s;", strings.TrimPrefix(m.Service, "marketdata-svc, scale "), m.VmHWMMB, m.MaxRSSUnderLoadMB, statusText(m.Status))
	}
	w("\n\n**Plans:** `EXPLAIN (ANALYZE, BUFFERS)` of every statement of each workload's request, at each size, in [%s](%s).", sc.PlansFile, sc.PlansFile)
	if len(sc.PlanFlags) > 0 {
		w(" Sequential scans of a large table and JIT compilation:\n\n")
		for _, f := range sc.PlanFlags {
			w("- %s\n", f)
		}
	} else {
		w(" No plan scans `eod_bars` or `tickers` sequentially or compiles with JIT.\n")
	}
	w("\n")
}
