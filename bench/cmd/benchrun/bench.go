package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type benchAccount struct{ key, accountID, noteID string }

// bench is the state of one run.
type bench struct {
	cfg     config
	r       *runner
	db      pg
	out     io.Writer
	started time.Time
	res     Results

	notesSvc, mdSvc, ceiling, minimal *process

	symbols     []string
	first, last time.Time
	mdKey       string
	notes       []benchAccount
	pairs       []string
	dates       []string
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.out, "bench: "+format+"\n", args...)
}

func (b *bench) stopAll() {
	b.stopServices()
	for _, p := range []**process{&b.ceiling, &b.minimal} {
		if *p != nil {
			(*p).stop()
			*p = nil
		}
	}
}

// phase runs one phase of the run and records how long it took.
func (b *bench) phase(ctx context.Context, id string, run func(context.Context) error) error {
	t := time.Now()
	err := run(ctx)
	if b.res.PhaseSeconds == nil {
		b.res.PhaseSeconds = map[string]float64{}
	}
	b.res.PhaseSeconds[id] = time.Since(t).Seconds()
	return err
}

// want reports whether the run includes workload id (BENCH_WORKLOADS);
// "scale" names every scale_ workload.
func (b *bench) want(id string) bool {
	return b.cfg.Only == nil || b.cfg.Only[id] || (b.cfg.Only["scale"] && strings.HasPrefix(id, "scale_"))
}

// marketdataIDs are the workloads that need the marketdata dataset and
// service.
var marketdataIDs = []string{"eod_hit", "eod_miss", "tickers", "import", "staleness"}

// needMarketdata reports whether any marketdata workload runs.
func (b *bench) needMarketdata() bool {
	for _, id := range marketdataIDs {
		if b.want(id) {
			return true
		}
	}
	return false
}

func (b *bench) run(ctx context.Context) error {
	if err := b.preflight(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	if b.needMarketdata() {
		if err := b.prepareMarketdata(ctx); err != nil {
			return fmt.Errorf("marketdata dataset: %w", err)
		}
	}
	if err := b.prepareNotes(ctx); err != nil {
		return fmt.Errorf("notes dataset: %w", err)
	}
	b.res.Dataset.SetupSeconds = time.Since(t0).Seconds()
	if b.needMarketdata() {
		b.choosePairs()
	}
	if err := b.writeDataFiles(); err != nil {
		return err
	}
	if _, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "FLUSHDB"}}); err != nil {
		return err
	}

	probes := b.probes()
	caps, err := b.captureSQL(ctx, probes)
	if err != nil {
		return fmt.Errorf("capture the services' SQL: %w", err)
	}
	if _, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "FLUSHDB"}}); err != nil {
		return err
	}
	if err := b.startServices(ctx, "run"); err != nil {
		return err
	}
	if b.needMarketdata() {
		if err := b.startCeiling(ctx); err != nil {
			return err
		}
	}
	if err := b.startMinimal(ctx); err != nil {
		return err
	}
	// What the machine does without the benchmark's load: other work on a
	// shared machine disturbs every figure.
	// BENCH_QUIET_WAIT lets a run on a shared machine wait for a quiet
	// moment (under 0.3 busy cores) before measuring.
	waitStart := time.Now()
	deadline := waitStart.Add(b.cfg.QuietWait)
	var idle *sampler
	for {
		idle = startSampler(0, b.roles(), 3*time.Second, b.cfg.Cores)
		time.Sleep(3 * time.Second)
		idle.finish()
		if idle.MachBusy < 0.3 || time.Now().After(deadline) {
			break
		}
		b.logf("machine busy %.2f cores; waiting for a quieter moment (BENCH_QUIET_WAIT)", idle.MachBusy)
		time.Sleep(5 * time.Second)
	}
	b.res.Machine.BackgroundBusyCores = idle.MachBusy
	b.res.QuietWaitSeconds = time.Since(waitStart).Seconds()
	steady := measureSteadiness(12, 250*time.Millisecond)
	b.res.Machine.Steadiness = &steady
	b.logf("machine busy %.2f of %d cores before the workloads (load average %s); steadiness: CPU loop %.2f-%.2f, loopback round trips %.2f-%.2f of their medians",
		idle.MachBusy, b.cfg.Cores, loadAvg(), steady.Min, steady.Max, steady.LoopbackMin, steady.LoopbackMax)
	if err := b.runWorkloads(ctx, caps); err != nil {
		return err
	}
	if b.want("staleness") {
		if err := b.runStaleness(ctx); err != nil {
			return fmt.Errorf("staleness: %w", err)
		}
	}
	b.stopAll()
	if b.want("import") {
		if err := b.runImport(ctx); err != nil {
			return fmt.Errorf("import workload: %w", err)
		}
	}
	for _, w := range []struct {
		id  string
		run func(context.Context) error
	}{{"intraday_import", b.runIntradayImport}, {"intraday_query", b.runIntradayQuery},
		{"sync_universe_day", b.runSyncUniverseDay}, {"sync_backfill", b.runSyncBackfill}} {
		if !b.want(w.id) {
			continue
		}
		if err := b.phase(ctx, w.id, w.run); err != nil {
			return fmt.Errorf("%s workload: %w", w.id, err)
		}
	}
	if b.wantScale() {
		if err := b.phase(ctx, "scale", b.runScale); err != nil {
			return fmt.Errorf("scale workloads: %w", err)
		}
	}
	if err := b.cleanNotes(ctx); err != nil {
		return err
	}
	if b.want("tenant_scale") {
		if err := b.runTenantScale(ctx); err != nil {
			return fmt.Errorf("tenant_scale: %w", err)
		}
	}
	if b.want("webhook_delivery") {
		if err := b.phase(ctx, "webhook_delivery", b.runWebhookDelivery); err != nil {
			return fmt.Errorf("webhook_delivery: %w", err)
		}
	}
	b.res.TotalSeconds = time.Since(b.started).Seconds()
	b.res.Commands = b.r.commands
	return b.writeReports()
}

// preflight checks the tools and binaries and records the machine.
func (b *bench) preflight(ctx context.Context) error {
	var missing []string
	for _, tool := range []string{"wrk", "pgbench", "psql", "redis-cli", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	for _, bin := range []string{b.bin("notes-svc"), b.bin("marketdata-svc"), b.benchTool("ceiling"), b.benchTool("benchdata"), b.benchTool("minimalnotes")} {
		if _, err := os.Stat(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing: %s (scripts/bench.sh installs and builds them)", strings.Join(missing, ", "))
	}
	for _, port := range []int{b.cfg.Ports.Notes, b.cfg.Ports.Marketdata, b.cfg.Ports.Ceiling, b.cfg.Ports.Minimal, b.cfg.Ports.NotesPprof, b.cfg.Ports.MarketdataPprof} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return fmt.Errorf("port %d is in use; is another bench running?", port)
		}
		l.Close()
	}
	m := &b.res.Machine
	m.Cores = b.cfg.Cores
	m.GoMaxProcs = runtime.GOMAXPROCS(0)
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(data), "\n", 2)[0], "MemTotal:"), "%d", &kb)
		m.MemTotalMB = kb / 1024
	}
	m.LoadAvgAtStart = loadAvg()
	if out, err := b.r.output(ctx, cmdSpec{name: "uname", args: []string{"-sr"}, quiet: true}); err == nil {
		m.Kernel = strings.TrimSpace(out)
	}
	m.GoVersion = runtime.Version()
	if v, err := b.db.value(ctx, "postgres", "SHOW server_version"); err == nil {
		m.PostgreSQL = v
	} else {
		return fmt.Errorf("PostgreSQL at %s: %w", b.cfg.AdminURL, err)
	}
	if out, err := b.r.output(ctx, cmdSpec{name: "pgbench", args: []string{"--version"}, quiet: true}); err == nil {
		m.Pgbench = strings.TrimSpace(out)
	}
	if out, _ := b.r.output(ctx, cmdSpec{name: "wrk", args: []string{"-v"}, quiet: true}); out != "" {
		m.Wrk = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	}
	b.res.GitRevision = revisionOf(b.cfg.Root, func(args ...string) (string, error) {
		return b.r.output(ctx, cmdSpec{name: "git", args: args, quiet: true})
	})
	b.res.GeneratedAt = b.started.UTC().Format(time.RFC3339)
	b.res.Settings = Settings{Duration: b.cfg.Duration.String(), Warmup: b.cfg.Warmup.String(),
		Connections: b.cfg.Connections, Threads: b.cfg.Threads, MDRate: b.cfg.MDRate, MDQuota: b.cfg.MDQuota}
	for _, kv := range os.Environ() {
		if (strings.HasPrefix(kv, "NOTES_") || strings.HasPrefix(kv, "MARKETDATA_")) && !strings.Contains(kv, "_URL=") {
			b.res.Settings.ServiceEnv = append(b.res.Settings.ServiceEnv, kv)
		}
	}
	return nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// choosePairs picks the symbol pairs of the cache-miss workload (one per
// account slot, spread over the symbol list) and its date_to values: every
// day 1..28 of every month from a year after the first bar to the last.
func (b *bench) choosePairs() {
	n := b.cfg.Accounts
	step := max(1, len(b.symbols)/(2*n))
	for i := range n {
		a := b.symbols[(2*i*step)%len(b.symbols)]
		c := b.symbols[((2*i+1)*step)%len(b.symbols)]
		if a == c {
			c = b.symbols[(2*i*step+1)%len(b.symbols)]
		}
		b.pairs = append(b.pairs, a+","+c)
	}
	b.dates = nil
	for y := b.first.Year() + 1; y <= b.last.Year(); y++ {
		for m := 1; m <= 12; m++ {
			for d := 1; d <= 28; d++ {
				b.dates = append(b.dates, fmt.Sprintf("%04d-%02d-%02d", y, m, d))
			}
		}
	}
	if len(b.dates)%7919 == 0 { // keep the Lua walk a permutation
		b.dates = b.dates[:len(b.dates)-1]
	}
}

func (b *bench) dataFile(name string) string { return filepath.Join(b.cfg.Out, name) }

// writeDataFiles writes what the Lua scripts read: the cache-miss pairs and
// dates, the notes keys and ids, and the POST body.
func (b *bench) writeDataFiles() error {
	var sb strings.Builder
	for _, p := range b.pairs {
		sb.WriteString("pair\t" + p + "\n")
	}
	for _, d := range b.dates {
		sb.WriteString("date\t" + d + "\n")
	}
	if err := os.WriteFile(b.dataFile("eod_miss.tsv"), []byte(sb.String()), 0o600); err != nil {
		return err
	}
	sb.Reset()
	for _, a := range b.notes {
		sb.WriteString(a.key + "\t" + a.noteID + "\t" + a.accountID + "\n")
	}
	if err := os.WriteFile(b.dataFile("notes.tsv"), []byte(sb.String()), 0o600); err != nil {
		return err
	}
	return os.WriteFile(b.dataFile("post.json"), []byte(postBody), 0o644)
}

// postBody is the note every POST of the benchmark creates: a title, about
// 600 bytes of content and two tags.
var postBody = `{"title":"` + postTitle + `","content":"` + strings.Repeat("Quarterly revenue grew while margins held; the team will review the forecast next week. ", 7) + `","tags":["bench","load"]}`

func (b *bench) startServices(ctx context.Context, phase string) error {
	var err error
	if b.notesSvc, err = b.serve(ctx, "notes-svc", "NOTES_", b.notesEnv(), b.cfg.Ports.Notes, b.cfg.Ports.NotesPprof, "", phase); err != nil {
		return err
	}
	if !b.needMarketdata() {
		return b.notesSvc.waitHTTP(ctx, b.notesURL("/readyz"), 30*time.Second)
	}
	if b.mdSvc, err = b.serve(ctx, "marketdata-svc", "MARKETDATA_", b.marketdataEnv(marketdataDB), b.cfg.Ports.Marketdata, b.cfg.Ports.MarketdataPprof, "", phase); err != nil {
		return err
	}
	if err := b.notesSvc.waitHTTP(ctx, b.notesURL("/readyz"), 30*time.Second); err != nil {
		return err
	}
	return b.mdSvc.waitHTTP(ctx, b.mdURL("/readyz"), 30*time.Second)
}

// serve starts service name (whose variables start with prefix) on its
// benchmark ports (no profiling port when pprofPort is 0), with no
// shutdown drain: the benchmark stops it between phases and nothing is
// load-balanced. Its log is per workload (a prefix of the log's name,
// such as "intraday-") and phase; only the run phase's command line is
// recorded.
func (b *bench) serve(ctx context.Context, name, prefix string, env map[string]string, port, pprofPort int, workload, phase string) (*process, error) {
	env[prefix+"HTTP_ADDR"] = fmt.Sprintf("127.0.0.1:%d", port)
	if pprofPort != 0 {
		env[prefix+"PPROF_ADDR"] = fmt.Sprintf("127.0.0.1:%d", pprofPort)
	}
	env[prefix+"SHUTDOWN_DRAIN"] = "0s"
	return b.r.start(ctx, cmdSpec{name: b.bin(name), args: []string{"serve"}, env: env, quiet: phase != "run"},
		filepath.Join(b.cfg.Out, "logs", name+"."+workload+phase+".log"))
}

func (b *bench) stopServices() {
	if b.notesSvc != nil {
		b.notesSvc.stop()
		b.notesSvc = nil
	}
	if b.mdSvc != nil {
		b.mdSvc.stop()
		b.mdSvc = nil
	}
}

func (b *bench) notesURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", b.cfg.Ports.Notes, path)
}

func (b *bench) mdURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", b.cfg.Ports.Marketdata, path)
}

func (b *bench) minimalURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", b.cfg.Ports.Minimal, path)
}

// startMinimal starts the minimal notes server, the ceiling of the notes
// workloads, on the bench notes database.
func (b *bench) startMinimal(ctx context.Context) error {
	var err error
	b.minimal, err = b.r.start(ctx, cmdSpec{name: b.benchTool("minimalnotes"),
		args: []string{"-addr", fmt.Sprintf("127.0.0.1:%d", b.cfg.Ports.Minimal), "-db", b.db.dbURL(notesDB)}},
		filepath.Join(b.cfg.Out, "logs", "minimalnotes.log"))
	if err != nil {
		return err
	}
	return b.minimal.waitHTTP(ctx, b.minimalURL("/healthz"), 10*time.Second)
}

func (b *bench) ceilingURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", b.cfg.Ports.Ceiling, path)
}

// ceilingHeaders is the header file of the ceiling: the captured answer's
// headers, one "Key: value" line each in a stable order, but for those
// net/http writes itself (Date, Content-Length) and Content-Type, which the
// ceiling sets as gin's c.Data does.
func ceilingHeaders(h http.Header) []byte {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(h)) {
		switch k {
		case "Date", "Content-Length", "Content-Type":
			continue
		}
		for _, v := range h[k] {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	return []byte(b.String())
}

// hitQuery is the cache-hit request: two symbols, 100 records.
func (b *bench) hitQuery() string {
	if len(b.symbols) < 2 {
		return "" // marketdata workloads not selected
	}
	return "/v1/eod?access_key=" + b.mdKey + "&symbols=" + b.symbols[0] + "," + b.symbols[1] + "&limit=100"
}

// tickersQuery asks for ten tickers.
func (b *bench) tickersQuery() string {
	if len(b.symbols) < 10 {
		return ""
	}
	return "/v1/tickers?access_key=" + b.mdKey + "&symbols=" + strings.Join(b.symbols[:10], ",")
}

// startCeiling captures the cache-hit and tickers answers from the running
// marketdata-svc, headers and body, and starts the bare Gin server with
// those bytes: the same answer on the wire, made with no work per request.
func (b *bench) startCeiling(ctx context.Context) error {
	bodies, err := b.startCeilingOf(ctx, "ceiling", [][2]string{{"/v1/eod", b.hitQuery()}, {"/v1/tickers", b.tickersQuery()}})
	b.res.CeilingBodies = append(b.res.CeilingBodies, bodies...)
	return err
}

// startCeilingOf starts the bare Gin server answering each route (first
// of a pair) with the answer marketdata-svc gave to its request (second,
// a path with its query), kept in files named after prefix and the route.
func (b *bench) startCeilingOf(ctx context.Context, prefix string, routes [][2]string) ([]CeilingBody, error) {
	args := []string{"-addr", fmt.Sprintf("127.0.0.1:%d", b.cfg.Ports.Ceiling)}
	var bodies []CeilingBody
	for _, rq := range routes {
		route, q := rq[0], rq[1]
		header, body, err := httpAnswer(ctx, "GET", b.mdURL(q), "", nil)
		if err != nil {
			return nil, fmt.Errorf("capture %s answer: %w", route, err)
		}
		file := b.dataFile(prefix + strings.ReplaceAll(route, "/", "_") + ".json")
		if err := os.WriteFile(file, body, 0o644); err != nil {
			return nil, err
		}
		headerFile := b.dataFile(prefix + strings.ReplaceAll(route, "/", "_") + ".headers")
		if err := os.WriteFile(headerFile, ceilingHeaders(header), 0o644); err != nil {
			return nil, err
		}
		bodies = append(bodies, CeilingBody{Route: route, Bytes: len(body), Headers: len(header)})
		args = append(args, "-route", route+"="+file, "-headers", route+"="+headerFile)
	}
	var err error
	b.ceiling, err = b.r.start(ctx, cmdSpec{name: b.benchTool("ceiling"), args: args}, filepath.Join(b.cfg.Out, "logs", prefix+".log"))
	if err != nil {
		return nil, err
	}
	return bodies, b.ceiling.waitHTTP(ctx, b.ceilingURL(routes[0][1]), 10*time.Second)
}

// revisionOf is the commit checked out at root, with "-dirty" when a
// tracked file differs from it, except the reports make bench writes: a
// run made after another one has not changed the code it measures. git
// runs the git command with its arguments; on its failure the revision is
// empty.
func revisionOf(root string, git func(args ...string) (string, error)) string {
	out, err := git("-C", root, "describe", "--always")
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(out)
	args := []string{"-C", root, "status", "--porcelain", "--untracked-files=no", "--", "."}
	for _, f := range []string{"BENCHMARKS.md", "bench/results.json", "bench/scale-plans.md"} {
		args = append(args, ":(exclude)"+f)
	}
	if st, err := git(args...); err != nil || strings.TrimSpace(st) != "" {
		rev += "-dirty"
	}
	return rev
}
