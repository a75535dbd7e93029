package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tickerdesk/tickerdesk/bench/internal/loadgen"
)

// Results is bench/results.json.
type Results struct {
	GeneratedAt  string  `json:"generated_at"`
	GitRevision  string  `json:"git_revision"`
	TotalSeconds float64 `json:"total_seconds"`
	// QuietWaitSeconds is the part of TotalSeconds spent checking for (and,
	// with BENCH_QUIET_WAIT, waiting for) a quiet machine.
	QuietWaitSeconds float64 `json:"quiet_wait_seconds"`
	// PhaseSeconds is the wall time of the phases run after the HTTP
	// workloads that time themselves whole (dataset included).
	PhaseSeconds   map[string]float64 `json:"phase_seconds,omitempty"`
	Machine        Machine            `json:"machine"`
	Settings       Settings           `json:"settings"`
	Dataset        Dataset            `json:"dataset"`
	CeilingBodies  []CeilingBody      `json:"ceiling_bodies"`
	Workloads      []WorkloadResult   `json:"workloads"`
	Memory         []MemoryResult     `json:"memory"`
	Import         *ImportResult      `json:"import"`
	IntradayImport *ImportResult      `json:"intraday_import,omitempty"`
	// SyncUniverseDay and SyncBackfill are `marketdata-svc sync` from the
	// providers' fake (sync.go).
	SyncUniverseDay *ImportResult `json:"sync_universe_day,omitempty"`
	SyncBackfill    *ImportResult `json:"sync_backfill,omitempty"`
	// Intraday is the dataset of the intraday_query workload.
	Intraday    *IntradayDataset `json:"intraday_dataset,omitempty"`
	TenantScale *TenantScale     `json:"tenant_scale,omitempty"`
	Staleness   *Staleness       `json:"staleness,omitempty"`
	// Webhooks is the webhook_delivery workload (webhooks.go).
	Webhooks *WebhookResult `json:"webhooks,omitempty"`
	// Scale is the scale workloads' datasets, memory and plans
	// (scalerun.go); their rows are in Workloads.
	Scale *ScaleRun `json:"scale,omitempty"`
	// ScaleUpdate is the daily update against the scale dataset
	// (scaleupdate.go).
	ScaleUpdate *ScaleUpdate `json:"scale_update,omitempty"`
	Commands    []string     `json:"commands"`
	// Reruns are the BENCH_WORKLOADS runs merged into the full run's
	// results since it was taken, oldest first: each names what it
	// measured again, so no figure is read as the full run's.
	Reruns []Rerun `json:"reruns,omitempty"`
}

// Rerun is a run of a subset of the workloads, merged into results.json.
type Rerun struct {
	GeneratedAt string   `json:"generated_at"`
	GitRevision string   `json:"git_revision"`
	Workloads   []string `json:"workloads"`
	Machine     Machine  `json:"machine"`
}

// Machine describes where the figures come from.
type Machine struct {
	Cores          int    `json:"cores"`
	GoMaxProcs     int    `json:"gomaxprocs"`
	CPUModel       string `json:"cpu_model"`
	MemTotalMB     int64  `json:"mem_total_mb"`
	Kernel         string `json:"kernel"`
	LoadAvgAtStart string `json:"loadavg_at_start"`
	// BackgroundBusyCores is how busy the machine was, in cores, during 3 s
	// right before the workloads with the benchmark idle.
	BackgroundBusyCores float64 `json:"background_busy_cores"`
	// Steadiness is how evenly the machine, still idle, ran two fixed
	// probes for 6 s right after that (steadiness.go); absent from runs
	// before it was measured.
	Steadiness *Steadiness `json:"steadiness,omitempty"`
	GoVersion  string      `json:"go_version"`
	PostgreSQL string      `json:"postgresql"`
	Pgbench    string      `json:"pgbench"`
	Wrk        string      `json:"wrk"`
}

// Settings are the load settings shared by every workload.
type Settings struct {
	Duration    string   `json:"duration"`
	Warmup      string   `json:"warmup"`
	Connections int      `json:"connections"`
	Threads     int      `json:"threads"`
	ServiceEnv  []string `json:"service_env,omitempty"`
	MDRate      int      `json:"marketdata_key_rate_per_second"`
	MDQuota     int64    `json:"marketdata_key_monthly_quota"`
}

// Dataset describes the bench databases.
type Dataset struct {
	EODRows          string  `json:"eod_rows_estimate"`
	Symbols          int     `json:"symbols"`
	DateFrom         string  `json:"date_from"`
	DateTo           string  `json:"date_to"`
	Reused           bool    `json:"marketdata_reused"`
	GenerateSeconds  float64 `json:"generate_seconds,omitempty"`
	GenerateOutput   string  `json:"generate_output,omitempty"`
	Notes            string  `json:"notes"`
	Accounts         int     `json:"accounts"`
	NotesReused      bool    `json:"notes_reused"`
	NotesLoadSeconds float64 `json:"notes_load_seconds,omitempty"`
	SetupSeconds     float64 `json:"setup_seconds"`
}

// CeilingBody is an answer captured for the bare Gin ceiling.
type CeilingBody struct {
	Route string `json:"route"`
	Bytes int    `json:"bytes"`
	// Headers is how many header fields the captured answer had; the
	// ceiling sends them all, with Content-Type and net/http's own.
	Headers int `json:"headers"`
}

// Side is one side of a workload: the service or its ceiling.
type Side struct {
	loadgen.Measurement
	What             string  `json:"what"`
	ProcessCores     float64 `json:"process_cores,omitempty"`
	MachineBusyCores float64 `json:"machine_busy_cores"`
	MaxRSSMB         float64 `json:"max_rss_mb,omitempty"`
	// CPU is the cores each part of the benchmark used during the
	// measurement ("other" is the rest of the machine's busy time).
	CPU map[string]float64 `json:"cpu_cores"`
	// Metrics are the service's cache and limiter counters over the
	// measurement.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Command string             `json:"command"`
}

// WorkloadResult is a workload measured side by side with its ceiling.
type WorkloadResult struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Service Side   `json:"service"`
	Ceiling *Side  `json:"ceiling"`
	// Database is the database's own figure beside an HTTP ceiling:
	// pgbench running the SQL the service ran for the same request.
	Database      *Side    `json:"database,omitempty"`
	DatabaseRatio float64  `json:"database_ratio,omitempty"`
	Concurrency   int      `json:"concurrency"`
	Ratio         float64  `json:"ratio"`
	Target        float64  `json:"target,omitempty"`
	Status        string   `json:"status"` // pass, miss, report
	SQL           string   `json:"pgbench_script,omitempty"`
	Profile       *Profile `json:"profile,omitempty"`
	// Rounds are the service and ceiling measured back to back, in turn,
	// for a workload with a target; Service and Ceiling are the sides of
	// the round with the median ratio.
	Rounds []Round `json:"rounds,omitempty"`
	// Slices is how many interleaved slices each side of a round ran in
	// (BENCH_SLICES), each SliceSeconds long; rounds recorded before
	// slicing have none, and slices recorded before their length was
	// fixed have no length (they were BENCH_DURATION / BENCH_SLICES,
	// rounded to wrk's whole second: 2 s by default).
	Slices       int     `json:"slices,omitempty"`
	SliceSeconds float64 `json:"slice_seconds,omitempty"`
	// Rerun is the revision of the subset run that measured this workload
	// after the full run; empty when the full run did.
	Rerun string `json:"rerun,omitempty"`
	// Scale is a scale workload's figures at each dataset size (scale.go):
	// Service is then the large size's (the small one's when it ran
	// alone), Ratio the one TargetText holds, and Ceiling bare Gin's for
	// scale_hit alone.
	Scale      *ScaleFigures `json:"scale,omitempty"`
	TargetText string        `json:"target_text,omitempty"`
}

// Round is one back-to-back measurement of a service and its ceiling.
type Round struct {
	ServiceRPS float64 `json:"service_rps"`
	CeilingRPS float64 `json:"ceiling_rps"`
	Ratio      float64 `json:"ratio"`
}

func (w *WorkloadResult) grade() {
	if w.Ceiling != nil && w.Ceiling.RPS > 0 {
		w.Ratio = w.Service.RPS / w.Ceiling.RPS
	}
	if w.Database != nil && w.Database.RPS > 0 {
		w.DatabaseRatio = w.Service.RPS / w.Database.RPS
	}
	switch {
	case w.Target == 0:
		w.Status = "report"
	case w.Service.Errors > 0:
		w.Status = "miss"
	case len(w.Rounds) > 0:
		w.Status = roundsStatus(figuresOf(w.Rounds, func(r Round) float64 { return r.Ratio }), w.Target)
	case w.Ratio >= w.Target:
		w.Status = "pass"
	default:
		w.Status = "miss"
	}
}

// roundsStatus grades the ratios of a workload's rounds against target:
// every round at or above it is a pass; a median at or above it with
// rounds below is "within noise", never a pass; a median below it is a
// miss.
func roundsStatus(ratios []float64, target float64) string {
	sorted := slices.Sorted(slices.Values(ratios))
	switch {
	case sorted[0] >= target:
		return "pass"
	case sorted[len(sorted)/2] >= target:
		return "within noise"
	}
	return "miss"
}

// figuresOf is one figure of each round.
func figuresOf[T any](rounds []T, figure func(T) float64) []float64 {
	out := make([]float64, len(rounds))
	for i, r := range rounds {
		out[i] = figure(r)
	}
	return out
}

// worstStatus is the worse of two grades: a miss, then within noise,
// then a pass.
func worstStatus(a, b string) string {
	for _, s := range []string{"miss", "within noise"} {
		if a == s || b == s {
			return s
		}
	}
	return a
}

// boundStatus is roundsStatus for a bound a ratio must stay at or under.
func boundStatus(ratios []float64, bound float64) string {
	negated := make([]float64, len(ratios))
	for i, r := range ratios {
		negated[i] = -r
	}
	return roundsStatus(negated, -bound)
}

// Profile is the CPU profile of a missed workload.
type Profile struct {
	File  string `json:"file,omitempty"`
	Top   string `json:"top,omitempty"`
	Cum   string `json:"cum,omitempty"`
	Error string `json:"error,omitempty"`
}

// MemoryResult is a service's resident memory.
type MemoryResult struct {
	Service           string  `json:"service"`
	VmHWMMB           float64 `json:"vmhwm_mb"`
	VmRSSMB           float64 `json:"vmrss_mb_after"`
	MaxRSSUnderLoadMB float64 `json:"max_rss_under_load_mb"`
	TargetMB          float64 `json:"target_mb"`
	Status            string  `json:"status"`
}

// ImportResult is an import workload against COPY.
type ImportResult struct {
	ID               string  `json:"id"` // import (EOD) or intraday_import
	Rows             int     `json:"rows"`
	FileMB           float64 `json:"file_mb"`
	Layout           string  `json:"layout"`
	ImportSeconds    float64 `json:"import_seconds"`
	ImportRowsPerSec float64 `json:"import_rows_per_second"`
	ImportCPUSeconds float64 `json:"import_cpu_seconds"`
	ImportMaxRSSMB   float64 `json:"import_max_rss_mb"`
	ImportOutput     string  `json:"import_output"`
	CopySeconds      float64 `json:"copy_seconds"`
	CopyRowsPerSec   float64 `json:"copy_rows_per_second"`
	Ratio            float64 `json:"ratio"`
	Target           float64 `json:"target"`
	Status           string  `json:"status"`
	ImportCommand    string  `json:"import_command"`
	CopyCommand      string  `json:"copy_command"`
	// Ceiling names what the import is measured against.
	Ceiling ImportCeiling `json:"ceiling"`
	// RoundRatios are every round's ratio, lowest first, for a workload
	// measured in rounds (the sync workloads); the figures above are the
	// median round's.
	RoundRatios []float64 `json:"round_ratios,omitempty"`
}

// ImportCeiling is the COPY side of an import workload.
type ImportCeiling struct {
	What string `json:"what"`
}

func (b *bench) writeReports() error {
	res := b.res
	if b.cfg.Only != nil {
		// A subset run replaces only what it measured: the other figures
		// stay those of the full run, and the report says which is which.
		prev, err := readResults(b.cfg.Root)
		if err != nil {
			return fmt.Errorf("merge into the last results: %w", err)
		}
		res = mergeRerun(prev, b.res)
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	data = []byte(b.r.redactText(string(data)))
	if err := os.WriteFile(filepath.Join(b.cfg.Root, "bench", "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	md := renderMarkdown(res, b.cfg.Root)
	md = b.r.redactText(md)
	if err := os.WriteFile(filepath.Join(b.cfg.Root, "BENCHMARKS.md"), []byte(md), 0o644); err != nil {
		return err
	}
	b.logf("wrote bench/results.json and BENCHMARKS.md in %.0fs total", b.res.TotalSeconds)
	return nil
}

func readResults(root string) (Results, error) {
	data, err := os.ReadFile(filepath.Join(root, "bench", "results.json"))
	if err != nil {
		return Results{}, err
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return Results{}, fmt.Errorf("read results.json: %w", err)
	}
	// Graded again by today's rules, so that a figure kept from an
	// earlier run is graded as a new one is.
	for i := range r.Workloads {
		w := &r.Workloads[i]
		switch {
		case len(w.Rounds) > 0:
			w.grade()
		case w.Scale != nil && w.Status != "report":
			w.Status = gradeScale(w.ID, w.Scale, false)
		}
	}
	return r, nil
}

// mergeSection puts the section measured, when the subset run measured
// it, in place of the full run's dst, and names it among the rerun's ids.
func mergeSection[T any](ids *[]string, name string, dst **T, measured *T) {
	if measured != nil {
		*dst = measured
		*ids = append(*ids, name)
	}
}

// mergeRerun puts what the subset run sub measured into the full run's
// results full: its workloads replace those of the same id (or are added),
// and each section it measured replaces the full run's.
func mergeRerun(full, sub Results) Results {
	out := full
	out.Workloads = slices.Clone(full.Workloads)
	var ids []string
	for _, w := range sub.Workloads {
		w.Rerun = sub.GitRevision
		ids = append(ids, w.ID)
		if i := slices.IndexFunc(out.Workloads, func(x WorkloadResult) bool { return x.ID == w.ID }); i >= 0 {
			out.Workloads[i] = w
		} else {
			out.Workloads = append(out.Workloads, w)
		}
	}
	mergeSection(&ids, "import", &out.Import, sub.Import)
	mergeSection(&ids, "intraday_import", &out.IntradayImport, sub.IntradayImport)
	mergeSection(&ids, "sync_universe_day", &out.SyncUniverseDay, sub.SyncUniverseDay)
	mergeSection(&ids, "sync_backfill", &out.SyncBackfill, sub.SyncBackfill)
	mergeSection(&ids, "tenant_scale", &out.TenantScale, sub.TenantScale)
	mergeSection(&ids, "staleness", &out.Staleness, sub.Staleness)
	mergeSection(&ids, "webhook_delivery", &out.Webhooks, sub.Webhooks)
	mergeSection(&ids, "scale", &out.Scale, sub.Scale)
	mergeSection(&ids, updateID, &out.ScaleUpdate, sub.ScaleUpdate)
	out.Reruns = append(slices.Clone(full.Reruns), Rerun{GeneratedAt: sub.GeneratedAt, GitRevision: sub.GitRevision, Workloads: ids, Machine: sub.Machine})
	return out
}

// rerender writes BENCHMARKS.md again from bench/results.json.
func rerender(root string, stdout io.Writer) error {
	r, err := readResults(root)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "BENCHMARKS.md"), []byte(renderMarkdown(r, root)), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "bench: wrote BENCHMARKS.md from bench/results.json")
	return nil
}

// roundList is a list of rounds' ratios, "0.41, 0.52, 0.60".
func roundList(ratios []float64) string {
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = f2(r)
	}
	return strings.Join(parts, ", ")
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

func statusText(s string) string {
	switch s {
	case "pass":
		return "**pass**"
	case "miss":
		return "**MISS**"
	case "within noise":
		return "within noise"
	}
	return "report"
}

// renderMarkdown writes BENCHMARKS.md from the results, with the
// hand-written analysis in bench/analysis.md appended when present.
func renderMarkdown(r Results, root string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks\n\n")
	w("Generated by `make bench` (scripts/bench.sh → bench/cmd/benchrun) on %s at revision `%s`; the whole run took %.0f s (of which %.0f s checking for a quiet machine). ", r.GeneratedAt, r.GitRevision, r.TotalSeconds, r.QuietWaitSeconds)
	w("Every figure below comes from this one run, except those a later subset run measured again (listed right below): each workload is measured right after its ceiling's warm-up, side by side, on the same machine. Machine-readable results: [bench/results.json](bench/results.json).\n\n")
	for _, x := range r.Reruns {
		w("- **Measured again** by `BENCH_WORKLOADS=%s make bench` on %s at revision `%s` (load average at start %s%s): %s. Their rows say so.\n",
			strings.Join(x.Workloads, ","), x.GeneratedAt, x.GitRevision, x.Machine.LoadAvgAtStart, steadinessNote(x.Machine.Steadiness), strings.Join(x.Workloads, ", "))
	}
	if len(r.Reruns) > 0 {
		w("\n")
	}
	m := r.Machine
	w("**Machine:** %d cores (%s), %d MB RAM, %s, load average at start %s; with the benchmark idle, other work kept %.2f of the %d cores busy right before the workloads%s. %s; %s; %s; services built with %s.\n\n",
		m.Cores, m.CPUModel, m.MemTotalMB, m.Kernel, m.LoadAvgAtStart, m.BackgroundBusyCores, m.Cores, steadinessNote(m.Steadiness), "PostgreSQL "+m.PostgreSQL, m.Pgbench, m.Wrk, m.GoVersion)
	s := r.Settings
	w("**Load:** every workload at fixed concurrency: wrk `-t%d -c%d`, pgbench `-c%d -j%d`, %s warm-up then %s measured. ", s.Threads, s.Connections, s.Connections, s.Threads, s.Warmup, s.Duration)
	w("The load generator, PostgreSQL, Redis and the service share the same %d cores, as they would on a single small host; the ceilings pay the same load-generator cost.\n\n", m.Cores)
	d := r.Dataset
	w("**Data:** %s EOD rows (estimate from pg_class) for %d symbols from `marketdata-svc generate`, %s to %s; %s notes over %d accounts (setup %.0f s", d.EODRows, d.Symbols, d.DateFrom, d.DateTo, d.Notes, d.Accounts, d.SetupSeconds)
	if d.Reused {
		w(", EOD data reused from an earlier run")
	} else if d.GenerateSeconds > 0 {
		w(", generate took %.0f s", d.GenerateSeconds)
	}
	if d.NotesReused {
		w(", notes reused")
	}
	w(").\n\n")

	w("## Results\n\n")
	w("The ratio is the service's req/s over its ceiling's. The last columns are the database's own figure where there is one: pgbench running the SQL the service ran for the same request, with nothing in front of it (not a ceiling for an HTTP service on the same cores, see \"Ceilings\" below).\n\n")
	w("| workload | service req/s | p50 ms | p99 ms | errors | ceiling | ceiling req/s | ceiling p50 / p99 ms | ratio | target | result | database's own figure (pgbench) req/s | service / database |\n")
	w("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|\n")
	for _, x := range r.Workloads {
		if x.Scale != nil {
			continue // below, with the other scenarios
		}
		c := x.Ceiling
		target := "report"
		if x.Target > 0 {
			target = "≥ " + strconv.FormatFloat(x.Target, 'f', -1, 64) + "×"
		}
		title := x.Title
		if x.Rerun != "" {
			title += " (measured again at `" + x.Rerun + "`)"
		}
		ceilName := "bare Gin"
		switch {
		case strings.HasPrefix(c.What, "pgbench"):
			ceilName = "pgbench, same SQL"
		case strings.HasPrefix(c.What, "minimal"):
			ceilName = "minimal server (net/http + pgx, same SQL)"
		}
		dbRPS, dbRatio := "–", "–"
		if x.Database != nil {
			dbRPS, dbRatio = f0(x.Database.RPS), f2(x.DatabaseRatio)+"×"
		}
		w("| %s | %s | %s | %s | %d | %s | %s | %s / %s | %s× | %s | %s | %s | %s |\n", title, f0(x.Service.RPS), f2(x.Service.P50Ms), f2(x.Service.P99Ms),
			x.Service.Errors, ceilName, f0(c.RPS), f2(c.P50Ms), f2(c.P99Ms), f2(x.Ratio), target, statusText(x.Status), dbRPS, dbRatio)
	}
	if im := r.Import; im != nil {
		w("| `marketdata-svc import` of a %d-row CSV | %s rows/s | | | 0 | `COPY` of the same file | %s rows/s | | %s× | ≥ %.1f× | %s | | |\n",
			im.Rows, f0(im.ImportRowsPerSec), f0(im.CopyRowsPerSec), f2(im.Ratio), im.Target, statusText(im.Status))
	}
	if im := r.IntradayImport; im != nil {
		w("| `marketdata-svc import --kind intraday` of a %d-row minute CSV | %s rows/s | | | 0 | `COPY` of the same file (plain table, same shape) | %s rows/s | | %s× | ≥ %.1f× | %s | | |\n",
			im.Rows, f0(im.ImportRowsPerSec), f0(im.CopyRowsPerSec), f2(im.Ratio), im.Target, statusText(im.Status))
	}
	if im := r.SyncUniverseDay; im != nil {
		w("| `marketdata-svc sync` of a %d-symbol exchange day (EODHD bulk fake; %.1f s, max RSS %.0f MB, bounds 60 s, 200 MB; median of rounds %s) | %s rows/s | | | 0 | `COPY` of the same rows | %s rows/s | | %s× | ≥ %.1f× | %s | | |\n",
			im.Rows, im.ImportSeconds, im.ImportMaxRSSMB, roundList(im.RoundRatios), f0(im.ImportRowsPerSec), f0(im.CopyRowsPerSec), f2(im.Ratio), im.Target, statusText(im.Status))
	}
	if im := r.SyncBackfill; im != nil {
		w("| `marketdata-svc sync` backfill, 100 symbols x 10 years (Tiingo fake; %.1f s, max RSS %.0f MB, bound 200 MB; median of rounds %s) | %s rows/s | | | 0 | `COPY` of the same rows | %s rows/s | | %s× | report | %s | | |\n",
			im.ImportSeconds, im.ImportMaxRSSMB, roundList(im.RoundRatios), f0(im.ImportRowsPerSec), f0(im.CopyRowsPerSec), f2(im.Ratio), statusText(im.Status))
	}
	if ts := r.TenantScale; ts != nil {
		w("| tenant_scale: tag listing p50, %d → %d accounts | %s → %s ms | | | | same request, %d accounts | | | %s× | ≤ %.2f× | %s | | |\n",
			ts.AccountsSmall, ts.AccountsLarge, f2(ts.Small.Tag.P50Ms), f2(ts.Large.Tag.P50Ms), ts.AccountsSmall, f2(ts.TagP50Ratio), ts.Target, statusText(ts.Status))
		w("| tenant_scale: search p50, %d → %d accounts | %s → %s ms | | | | same request, %d accounts | | | %s× | ≤ %.2f× | %s | | |\n",
			ts.AccountsSmall, ts.AccountsLarge, f2(ts.Small.Q.P50Ms), f2(ts.Large.Q.P50Ms), ts.AccountsSmall, f2(ts.QP50Ratio), ts.Target, statusText(ts.Status))
	}
	for _, x := range r.Workloads {
		if x.Scale != nil && len(x.Scale.Sizes) > 0 {
			w("%s", scaleResultRow(x))
		}
	}
	if u := r.ScaleUpdate; u != nil {
		w("%s", updateResultRows(u))
	}
	if sc := r.Scale; sc != nil {
		for _, mem := range sc.Memory {
			w("| resident memory of %s during the scale workloads | VmHWM %.1f MB | | | | | | | | < %.0f MB | %s | | |\n", mem.Service, mem.VmHWMMB, mem.TargetMB, statusText(mem.Status))
		}
	}
	if x := r.Webhooks; x != nil {
		w("| webhook_delivery: backlog of %d events sent to a local receiver | %s deliveries/s | | | %d duplicates | | | | | ≥ %.0f/s | %s | | |\n",
			x.Events, f0(x.DeliveriesPerSec), x.Duplicates, x.RateTarget, statusText(x.RateStatus))
		w("| webhook_delivery: lag from a note's POST to its delivery at %.0f writes/s | | %s | %s | %d | | | | | p99 < %.0f ms | %s | | |\n",
			x.WriteRate, f2(x.LagP50Ms), f2(x.LagP99Ms), x.WriteErrors, x.LagTargetMs, statusText(x.LagStatus))
	}
	if st := r.Staleness; st != nil {
		w("| staleness after an import, announced (pub/sub), worst of %d | %s ms | | | | | | | | ≤ %.0f ms | %s | | |\n", st.Trials, f2(slices.Max(st.PubSubMS)), st.BoundMS, statusText(st.Status))
		w("| staleness after an import, announcement lost (poll), worst of %d | %s ms | | | | | | | | ≤ %.0f ms | %s | | |\n", st.Trials, f2(slices.Max(st.LostMessageMS)), st.BoundMS, statusText(st.Status))
		w("| staleness after an import whose publish failed (PostgreSQL check), worst of %d | %s ms | | | | | | | | ≤ %.0f ms | %s | | |\n", st.Trials, f2(slices.Max(st.FailedPublishMS)), st.FailedPublishBound, statusText(st.Status))
	}
	for _, mem := range r.Memory {
		w("| resident memory of %s under load | VmHWM %.1f MB | | | | | | | | < %.0f MB | %s | | |\n", mem.Service, mem.VmHWMMB, mem.TargetMB, statusText(mem.Status))
	}
	for _, x := range r.Workloads {
		if x.Ceiling != nil && x.Ceiling.LatencyNote != "" {
			w("\n%s ceiling: %s.\n", x.ID, x.Ceiling.LatencyNote)
		}
	}
	w("\nErrors count socket errors and HTTP statuses ≥ 400 (wrk), or failed/aborted transactions (pgbench). Latencies: wrk's histogram; pgbench's per-transaction log (`--log`).\n\n")

	w("### Where the CPU went\n\n")
	w("Cores used during each measurement, from /proc (%d cores in all). *other* is busy time of processes that are not part of the benchmark: on a shared machine it shows how much the figures were disturbed.\n\n", m.Cores)
	w("| workload | side | req/s | measured process | postgres | redis | load generator | other | machine busy |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(id string, sd Side) {
		proc := "–"
		if sd.ProcessCores > 0 {
			proc = f2(sd.ProcessCores)
		}
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", id, sd.What, f0(sd.RPS), proc, f2(sd.CPU["postgres"]), f2(sd.CPU["redis"]),
			f2(sd.CPU["loadgen"]), f2(sd.CPU["other"]), f2(sd.MachineBusyCores))
	}
	for _, x := range r.Workloads {
		if x.Scale != nil {
			for _, sz := range x.Scale.Sizes {
				row(x.ID+" ("+sz.Size+")", sz.Service)
				if sz.Base != nil {
					row(x.ID+" ("+sz.Size+", compared with)", *sz.Base)
				}
			}
			continue
		}
		row(x.ID, x.Service)
		row(x.ID, *x.Ceiling)
		if x.Database != nil {
			row(x.ID, *x.Database)
		}
	}
	w("\n")
	var counters []string
	for _, x := range r.Workloads {
		if len(x.Service.Metrics) == 0 {
			continue
		}
		names := make([]string, 0, len(x.Service.Metrics))
		for k := range x.Service.Metrics {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, fmt.Sprintf("%s %.0f", strings.TrimPrefix(k, "marketdata_"), x.Service.Metrics[k]))
		}
		counters = append(counters, fmt.Sprintf("- %s: %s", x.ID, strings.Join(parts, ", ")))
	}
	var rounds []string
	roundCount := 0
	for _, x := range r.Workloads {
		if len(x.Rounds) == 0 {
			continue
		}
		roundCount = len(x.Rounds)
		parts := make([]string, len(x.Rounds))
		for i, rd := range x.Rounds {
			parts[i] = fmt.Sprintf("%s / %s req/s = %s×", f0(rd.ServiceRPS), f0(rd.CeilingRPS), f2(rd.Ratio))
		}
		how := "back to back"
		switch {
		case x.Slices > 1 && x.SliceSeconds > 0:
			how = fmt.Sprintf("%d interleaved slices of %g s a side", x.Slices, x.SliceSeconds)
		case x.Slices > 1:
			how = fmt.Sprintf("%d interleaved slices a side", x.Slices)
		}
		rounds = append(rounds, fmt.Sprintf("- %s (%s): %s", x.ID, how, strings.Join(parts, "; ")))
	}
	if len(rounds) > 0 {
		w("Rounds: a workload held to a target against an HTTP ceiling is measured %d times, the service and its ceiling side by side each time, so that the machine's drift over the run falls on both sides of each round's ratio. "+
			"A round measures each side in 1 s slices (`BENCH_SLICES` of them; a write workload, whose every slice starts from a reset table, in five 2 s slices) that alternate with the other side's, each pair in the opposite order to the one before (service, ceiling, ceiling, service, ...), so that both are measured over the same stretch of the machine's time; the side's figures are its slices taken together (latency percentiles pooled from each slice's percentiles at every 0.1%%). "+
			"Rounds marked back to back were measured before slicing, each side whole and one after the other, in turns. "+
			"The table shows the round with the median ratio; all rounds, service / ceiling:\n\n%s\n\n", roundCount, strings.Join(rounds, "\n"))
	}
	if len(counters) > 0 {
		w("Counters over each service measurement: marketdata-svc's cache and limiter counters from `/metrics` (does the cache-hit workload hit, did anything fall back), and the database sessions the service opened while the load ran (`pg_stat_database.sessions`; a steady pool opens none):\n\n%s\n\n", strings.Join(counters, "\n"))
	}
	if im := r.Import; im != nil {
		w("### Import\n\n%d rows (%.1f MB, %s): `COPY` %.2f s (%s rows/s); `marketdata-svc import` %.2f s (%s rows/s, %.2f s CPU in the importer, max RSS %.0f MB). Importer output: `%s`\n\n",
			im.Rows, im.FileMB, im.Layout, im.CopySeconds, f0(im.CopyRowsPerSec), im.ImportSeconds, f0(im.ImportRowsPerSec), im.ImportCPUSeconds, im.ImportMaxRSSMB, im.ImportOutput)
	}
	if r.IntradayImport != nil || r.Intraday != nil {
		renderIntraday(w, r)
	}
	if ts := r.TenantScale; ts != nil {
		renderTenantScale(w, ts)
	}
	if st := r.Staleness; st != nil {
		renderStaleness(w, st)
	}
	if x := r.Webhooks; x != nil {
		renderWebhooks(w, x)
	}
	if sc := r.Scale; sc != nil {
		renderScale(w, sc, r.Workloads)
	}
	if u := r.ScaleUpdate; u != nil {
		renderScaleUpdate(w, u)
	}
	w("### Memory\n\n| service | VmHWM MB (peak RSS since start) | max VmRSS MB sampled under load | VmRSS MB after the run | target |\n|---|---:|---:|---:|---:|\n")
	for _, mem := range r.Memory {
		w("| %s | %.1f | %.1f | %.1f | < %.0f MB |\n", mem.Service, mem.VmHWMMB, mem.MaxRSSUnderLoadMB, mem.VmRSSMB, mem.TargetMB)
	}
	w("\n")

	var missed []WorkloadResult
	for _, x := range r.Workloads {
		if x.Profile != nil {
			missed = append(missed, x)
		}
	}
	if len(missed) > 0 {
		w("## Profiles of missed targets\n\n")
		w("CPU profiles taken from the service's pprof listener while the workload ran again after the measurements (`go tool pprof -top`).\n\n")
		for _, x := range missed {
			if x.TargetText != "" {
				w("### %s: %s (ratio %.2f; target %s)\n\n", x.ID, x.Title, x.Ratio, x.TargetText)
			} else {
				w("### %s (ratio %.2f, target %s×)\n\n", x.Title, x.Ratio, strconv.FormatFloat(x.Target, 'f', -1, 64))
			}
			if x.Profile.Error != "" {
				w("Profile failed: %s\n\n", x.Profile.Error)
				continue
			}
			w("```\n%s\n```\n\n", x.Profile.Top)
			if x.Profile.Cum != "" {
				w("Cumulative (where the time is spent, callers included):\n\n```\n%s\n```\n\n", x.Profile.Cum)
			}
		}
	}
	if analysis, err := os.ReadFile(filepath.Join(root, "bench", "analysis.md")); err == nil {
		w("## Analysis\n\n%s\n", strings.TrimSpace(string(analysis)))
		w("\n")
	}

	w("## Ceilings\n\n")
	w("- **minimal notes server** (`bench/cmd/minimalnotes`), the ceiling of every notes workload: `net/http`, a pgx pool of the service's size (20) and notes-svc's own statements, copied from `notes-svc/internal/notesdb` — the account-scoped `SELECT` by id, the `INSERT` (with an id of the same UUIDv7 shape, so PostgreSQL pays the same for the time-ordered key), and for a listing with `limit` the exact `count(*)` for `X-Total-Count` and the page query. It answers the same JSON shape and takes the account from an `X-Account-ID` header: no key check, access log, metrics, request id, deadline or input validation. wrk sends both servers the same requests (both headers), so the ratio is what the service's own code costs on top of the least a Go server must do for the same answer on the same cores.\n")
	w("- **the database's own figure** (pgbench), kept beside it: the same captured SQL with nothing in front of it. It is no ceiling for an HTTP service sharing the same two cores (it spends no CPU on HTTP, JSON or a Go runtime, so every service sits far below it), but it shows how much of a workload is the database's.\n")
	w("- **bare Gin** (`bench/cmd/ceiling`), the ceiling of the marketdata cache hit and tickers: `gin.New()` without middleware serving the exact bytes marketdata-svc answered: the body and every header of the captured answer (`bench/out/ceiling_*.headers`: cache, ETag, rate-limit and request-id fields; net/http adds Date and Content-Length to both), so both servers put the same bytes on the wire.\n\n")
	w("## SQL of the pgbench figures\n\n")
	w("Captured from the services themselves: the harness turns on `log_statement = 'all'` for the bench database, sends two probe requests per workload, keeps the statements both probes ran (so background statements drop out), and turns each `$n` into a pgbench variable. The scripts below are for the first account or symbol pair; the run uses one script per account or pair.\n\n")
	for _, x := range r.Workloads {
		if x.SQL == "" {
			continue
		}
		w("**%s**\n\n```sql\n%s```\n\n", x.Title, x.SQL)
	}

	w("## Reproduce\n\n")
	w("`make bench` (or `scripts/bench.sh`) on a clone: it installs wrk and the PostgreSQL client tools from Debian when missing, builds the services and the bench tools, starts the local stack if it is not running, and runs everything below. ")
	w("The datasets live in the databases `bench_marketdata`, `bench_notes`, `bench_intraday`, `bench_tenants_N` and `bench_scale_small`, `bench_scale_large` of the local cluster and is regenerated only when missing (`BENCH_FRESH=1` forces it). ")
	w("Settings: `BENCH_DURATION`, `BENCH_WARMUP`, `BENCH_CONNECTIONS`, `BENCH_THREADS`, `BENCH_SYMBOLS`, `BENCH_YEARS`, `BENCH_NOTES`, `BENCH_ACCOUNTS`, `BENCH_IMPORT_ROWS`, `BENCH_MD_RATE`, `BENCH_MD_QUOTA`, `BENCH_PORT_OFFSET` (moves the bench's listeners, 18080 and up), `BENCH_QUIET_WAIT` (on a shared machine, wait up to this long for a quiet moment before measuring), `BENCH_ROUNDS` (rounds of each workload held to a target against an HTTP ceiling, 9), `BENCH_SLICES` (the interleaved 1 s slices each side of such a round runs in, 30), `BENCH_WORKLOADS` (a subset: workload ids, `import`, `intraday_import`, `tenant_scale`, `webhook_delivery`, `scale` for every scale workload, scale_update among them; its figures replace only those of the same workloads in the last full run's results, each marked with the revision that measured it again), `BENCH_INTRADAY_SYMBOLS`, `BENCH_INTRADAY_DAYS`, `BENCH_INTRADAY_IMPORT_SYMBOLS`, `BENCH_INTRADAY_LOAD_JOBS` (intraday_query's dataset is SYMBOLS × DAYS × 390 minutes, kept in `bench_intraday`; intraday_import's file IMPORT_SYMBOLS × DAYS × 390), `BENCH_TENANT_NOTES`, `BENCH_TENANT_SMALL`, `BENCH_TENANT_LARGE` (tenant_scale's notes per account and tenant counts), `BENCH_SCALE` (`small`: the scale workloads at the small size alone), `BENCH_SCALE_CONNECTIONS` (2) and `BENCH_SCALE_ROUNDS` (3) (the scale latency workloads' connections and rounds); service settings (`NOTES_*`, `MARKETDATA_*`) pass through.")
	if len(s.ServiceEnv) > 0 {
		w(" Service settings in effect for this run: `%s`.", strings.Join(s.ServiceEnv, "`, `"))
	}
	w("\n\nKeys are created fresh for each run (`$MARKETDATA_KEY`, `$NOTES_KEY_nnn` below); the marketdata key has limits (%d requests per second, %d per month, never reached) so the rate limiter and the usage counter run on every request, as for a customer's key.\n\n", s.MDRate, s.MDQuota)
	w("Exact commands of this run, in order:\n\n```sh\n")
	for _, c := range r.Commands {
		w("%s\n", c)
	}
	w("```\n")
	return b.String()
}
