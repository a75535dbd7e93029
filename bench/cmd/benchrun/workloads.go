package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/bench/internal/loadgen"
	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// probes are the requests whose SQL becomes the pgbench ceilings.
func (b *bench) probes() []probe {
	eodMiss := func(i int) (string, string) {
		pair := b.pairs[i%len(b.pairs)]
		date := b.dates[(len(b.dates)/2+i*37)%len(b.dates)]
		return pair, date
	}
	notesBind := func(extra func(v string) string) func(i, script int) sqlcapture.Binding {
		return func(i, script int) sqlcapture.Binding {
			a := b.notes[i]
			return func(v string) string {
				switch v {
				case a.accountID:
					return fmt.Sprintf("acc_%d", script+1)
				case a.noteID:
					return fmt.Sprintf("note_%d", script+1)
				}
				if extra != nil {
					return extra(v)
				}
				return ""
			}
		}
	}
	// notesProbe is a notes request sent as notes.lua sends it, to
	// notes-svc (send) and to the minimal server (minimal), each of which
	// reads the account its own way.
	notesProbe := func(name, method string, path func(a benchAccount) string, body []byte) probe {
		to := func(base func(string) string) func(context.Context, int) error {
			return func(ctx context.Context, i int) error {
				a := b.notes[i]
				_, err := notesCall(ctx, method, base(path(a)), a, body)
				return err
			}
		}
		return probe{workload: name, db: notesDB, bind: notesBind(nil), send: to(b.notesURL), minimal: to(b.minimalURL)}
	}
	listProbe := func(name, query string) probe {
		return notesProbe(name, "GET", func(benchAccount) string { return "/v1/notes?" + query }, nil)
	}
	post := notesProbe("notes_post", "POST", func(benchAccount) string { return "/v1/notes" }, []byte(postBody))
	post.bind = notesBind(func(v string) string {
		if noteIDRe.MatchString(v) {
			return "newid"
		}
		return ""
	})
	// A fresh primary key per transaction, as the service generates.
	post.prelude = "\\set newid random(1, 9000000000000000000)\n"
	y0, y1 := b.first.Year()+1, b.last.Year()
	all := []probe{
		{workload: "eod_miss", db: marketdataDB,
			send: func(ctx context.Context, i int) error {
				pair, date := eodMiss(i)
				_, err := httpCall(ctx, "GET", b.mdURL("/v1/eod?access_key="+b.mdKey+"&symbols="+pair+"&date_to="+date+"&limit=100"), "", nil)
				return err
			},
			bind: func(i, script int) sqlcapture.Binding {
				pair, date := eodMiss(i)
				syms := strings.Split(pair, ",")
				return func(v string) string {
					if strings.HasPrefix(v, "{") && strings.Contains(v, syms[0]) && strings.Contains(v, syms[1]) {
						return fmt.Sprintf("syms_%d", script+1)
					}
					if strings.HasPrefix(v, date) {
						return "dt"
					}
					return ""
				}
			},
			// date_to as YYYYMMDD, which PostgreSQL reads as a date: the
			// same days 1..28 of every month the HTTP side walks.
			prelude: fmt.Sprintf("\\set y random(%d, %d)\n\\set m random(1, 12)\n\\set d random(1, 28)\n\\set dt :y * 10000 + :m * 100 + :d\n", y0, y1),
		},
		notesProbe("notes_get", "GET", func(a benchAccount) string { return "/v1/notes/" + a.noteID }, nil),
		post,
		listProbe("notes_list_tag", listTagQuery),
		listProbe("notes_list_q", listSearchQuery),
	}
	var out []probe
	for _, p := range all {
		if b.want(p.workload) {
			out = append(out, p)
		}
	}
	return out
}

// roundRatios lists the rounds' ratios for the log.
func roundRatios(rounds []Round) string {
	parts := make([]string, len(rounds))
	for i, r := range rounds {
		parts[i] = fmt.Sprintf("%.2f", r.Ratio)
	}
	return strings.Join(parts, ", ")
}

// serviceCounters reads, for measureHTTP, the counters recorded for a
// service: marketdata-svc's cache and limiter counters, and the sessions
// its database has had, so that a pool that closes and reopens
// connections under steady load shows. The sessions are read through the
// postgres database, so reading them opens none in db.
func (b *bench) serviceCounters(ctx context.Context, service, db string) func() map[string]float64 {
	return func() map[string]float64 {
		c := map[string]float64{}
		if service == "marketdata-svc" {
			maps.Copy(c, scrapeCounters(b.mdURL("/metrics"), metricPrefixes...))
		}
		c["db_sessions_opened"] = b.sessions(ctx, db)
		return c
	}
}

// sessions is the number of sessions database db has had.
func (b *bench) sessions(ctx context.Context, db string) float64 {
	v, err := b.db.value(ctx, "postgres", fmt.Sprintf("SELECT sessions FROM pg_stat_database WHERE datname = %s", lit(db)))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseFloat(v, 64)
	return n
}

// metricPrefixes are the marketdata-svc counters recorded per workload.
var metricPrefixes = []string{"marketdata_cache_hits", "marketdata_cache_misses", "marketdata_cache_fallbacks",
	"marketdata_cache_errors", "marketdata_cache_memory_hits", "marketdata_ratelimit_errors"}

const (
	listTagQuery    = "tag=research&limit=20"
	listSearchQuery = "q=dividend&limit=20"
)

// wrkRun runs w's wrk once (its warm-up side when warmup). With record
// false the run is not recorded and its result is ignored.
func (b *bench) wrkRun(ctx context.Context, d time.Duration, w httpWorkload, warmup, record bool) (loadgen.Measurement, string, error) {
	threads, conns := w.load(b.cfg)
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", seconds(d),
		"--timeout", "5s", "-s", w.script, w.url}
	if scriptArgs := w.args(warmup); len(scriptArgs) > 0 {
		args = append(append(args, "--"), scriptArgs...)
	}
	spec := cmdSpec{name: "wrk", args: args, dir: filepath.Join(b.cfg.Root, "bench", "lua"), quiet: !record}
	out, err := b.r.output(ctx, spec)
	cmdline := ""
	if record {
		cmdline = b.r.commands[len(b.r.commands)-1]
	}
	if err != nil {
		return loadgen.Measurement{}, cmdline, err
	}
	m, err := loadgen.ParseWrk(out)
	return m, cmdline, err
}

func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second))) + "s"
}

// pgbenchRun runs pgbench with the workload's scripts. The recorded
// command names the script directory instead of listing every -f and -D.
func (b *bench) pgbenchRun(ctx context.Context, name, db string, files []string, defines map[string]string, d time.Duration, record bool) (loadgen.Measurement, string, error) {
	secs := strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(b.cfg.Connections), "-j", strconv.Itoa(b.cfg.Threads), "-T", secs}
	names := make([]string, 0, len(defines))
	for k := range defines {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "-D", k+"="+defines[k])
	}
	for _, f := range files {
		args = append(args, "-f", f+"@1")
	}
	prefix := filepath.Join(b.cfg.Out, "pgbench", name+".log")
	if record {
		old, _ := filepath.Glob(prefix + ".*")
		for _, f := range old {
			os.Remove(f)
		}
		args = append(args, "--log", "--log-prefix="+prefix)
	}
	args = append(args, b.db.dbURL(db))
	dir := filepath.Dir(files[0])
	summary := fmt.Sprintf("pgbench -n -M prepared -c %d -j %d -T %s -D <%d variables: account ids, note ids, symbol arrays, captured constants> -f %s/sNNN.sql@1 (%d scripts, one per account or symbol pair) --log %s",
		b.cfg.Connections, b.cfg.Threads, secs, len(defines), dir, len(files), b.db.dbURL(db))
	if err := os.WriteFile(filepath.Join(dir, "command.txt"), []byte("pgbench "+strings.Join(quoteAll(args), " ")+"\n"), 0o644); err != nil {
		return loadgen.Measurement{}, "", err
	}
	if record {
		b.r.commands = append(b.r.commands, summary)
		b.logf("$ %s", summary)
	}
	out, err := b.r.output(ctx, cmdSpec{name: "pgbench", args: args, quiet: true})
	if err != nil {
		return loadgen.Measurement{}, summary, err
	}
	if !record {
		return loadgen.Measurement{}, summary, nil
	}
	m, err := loadgen.ParsePgbench(out, prefix)
	return m, summary, err
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return out
}

// httpWorkload is the wrk side of a workload.
type httpWorkload struct {
	url    string
	script string
	args   func(warmup bool) []string
	// conns is wrk's connections; 0 is BENCH_CONNECTIONS.
	conns int
}

// load is wrk's threads and connections for w: BENCH_THREADS threads, no
// more than the connections.
func (w httpWorkload) load(cfg config) (threads, conns int) {
	conns = cfg.Connections
	if w.conns > 0 {
		conns = w.conns
	}
	return min(cfg.Threads, conns), conns
}

// at is the same workload sent to another server.
func (w httpWorkload) at(url string) httpWorkload {
	w.url = url
	return w
}

// minimalWhat names the minimal notes server in results.json.
const minimalWhat = "minimal notes server (bench/cmd/minimalnotes: net/http, pgx pool, notes-svc's SQL; no auth, logging or metrics)"

// measureHTTP warms up and measures one wrk workload while sampling pid.
// counters, when not nil, is read after the warm-up and again after the
// measurement, and Side.Metrics holds the differences: what the measured
// load alone did, not the warm-up that grew the pools and filled caches.
func (b *bench) measureHTTP(ctx context.Context, w httpWorkload, pid int, what string, counters func() map[string]float64) (Side, error) {
	return b.measureSlice(ctx, w, pid, what, counters, b.cfg.Duration, true)
}

// measureSlice measures w for d, after a warm-up when warm is set.
func (b *bench) measureSlice(ctx context.Context, w httpWorkload, pid int, what string, counters func() map[string]float64, d time.Duration, warm bool) (Side, error) {
	if warm {
		if _, _, err := b.wrkRun(ctx, b.cfg.Warmup, w, true, false); err != nil {
			return Side{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	var before map[string]float64
	if counters != nil {
		before = counters()
	}
	s := startSampler(pid, b.roles(), d, b.cfg.Cores)
	m, cmdline, err := b.wrkRun(ctx, d, w, false, true)
	s.finish()
	if err != nil {
		return Side{}, err
	}
	side := Side{Measurement: m, What: what, ProcessCores: s.ProcCores, MachineBusyCores: s.MachBusy, CPU: s.Cores,
		Command: cmdline, MaxRSSMB: mb(s.maxRSS)}
	if counters != nil {
		side.Metrics = map[string]float64{}
		for k, v := range counters() {
			side.Metrics[k] = v - before[k]
		}
	}
	return side, nil
}

// sliceLength is the length of a slice of a round: wrk's shortest run.
// The machine's speed drifts over seconds and both sides drift with it,
// so the closer in time a service slice and its ceiling slice are, the
// more of the drift their ratio cancels. In 120 pairs of 1 s notes_get
// slices taken in turn on the 2-core VM (service, ceiling, ceiling,
// service, ...), either side's rate moved by 15-17% from slice to slice,
// with a correlation of 0.6 between neighbouring slices and of 0.67
// between the two slices of a pair, while the pairs' ratios moved by 0.11
// with no correlation between neighbouring pairs: noise that averaging
// takes out. The ratio over 5, 10, 15 and 30 pairs had a standard
// deviation of 0.054, 0.030, 0.018 and 0.010, around 0.89. Five 2 s
// slices a side, this harness's rounds before, put nine rounds of one run
// between 0.81 and 0.99; ten 1 s slices, between 0.84 and 0.92 (the same
// code, one after the other). With thirty 1 s slices a side
// (Config.Slices) four runs put them between 0.86 and 0.91, 0.84 and
// 0.96, 0.88 and 0.93, and 0.86 and 0.91, where five runs of five 2 s
// slices put them 0.14 to 0.21 apart: narrower, not yet a point, since
// the machine is noisier in some runs than in others. More slices would
// narrow them further only as the square root of a round's time, which
// is already some twelve minutes a workload.
const sliceLength = time.Second

// writeSlices and writeSliceLength slice a write workload's rounds (see
// runWorkloads).
const (
	writeSlices      = 5
	writeSliceLength = 2 * time.Second
)

// sliceOrder is the order of the sides (0 the service, 1 its ceiling) in
// slice k of round i: each pair the other way round from the one before,
// and each round starting the other way round from the one before, so
// that neither side always runs first, in a round or in the run.
func sliceOrder(i, k int) [2]int {
	if (i+k)%2 == 1 {
		return [2]int{1, 0}
	}
	return [2]int{0, 1}
}

// joinSlices is one side of a round measured in slices, taken as one
// measurement: the load's figures merged (loadgen.Merge), the cores each
// part used averaged over the slices' time, the counters added up and the
// largest resident set kept.
func joinSlices(parts []Side) (Side, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	runs := make([]loadgen.Measurement, len(parts))
	for i, p := range parts {
		runs[i] = p.Measurement
	}
	m, err := loadgen.Merge(runs)
	if err != nil {
		return Side{}, err
	}
	out := Side{Measurement: m, What: parts[0].What, CPU: map[string]float64{},
		Command: fmt.Sprintf("%s (%d slices of this length, interleaved with the other side's)", parts[0].Command, len(parts))}
	for _, p := range parts {
		share := p.Seconds / m.Seconds
		out.ProcessCores += p.ProcessCores * share
		out.MachineBusyCores += p.MachineBusyCores * share
		for k, v := range p.CPU {
			out.CPU[k] += v * share
		}
		out.MaxRSSMB = max(out.MaxRSSMB, p.MaxRSSMB)
		if p.Metrics != nil && out.Metrics == nil {
			out.Metrics = map[string]float64{}
		}
		for k, v := range p.Metrics {
			out.Metrics[k] += v
		}
	}
	return out, nil
}

func (b *bench) measurePgbench(ctx context.Context, name, db string, files []string, defines map[string]string) (Side, error) {
	if _, _, err := b.pgbenchRun(ctx, name, db, files, defines, b.cfg.Warmup, false); err != nil {
		return Side{}, fmt.Errorf("warm-up: %w", err)
	}
	s := startSampler(0, b.roles(), b.cfg.Duration, b.cfg.Cores)
	m, cmdline, err := b.pgbenchRun(ctx, name, db, files, defines, b.cfg.Duration, true)
	s.finish()
	if err != nil {
		return Side{}, err
	}
	return Side{Measurement: m, What: "pgbench -M prepared (the service's captured SQL)", MachineBusyCores: s.MachBusy, CPU: s.Cores, Command: cmdline}, nil
}

// roles names the benchmark's own long-running processes for the CPU
// breakdown.
func (b *bench) roles() map[int]string {
	r := map[int]string{}
	for p, name := range map[*process]string{b.mdSvc: "marketdata-svc", b.notesSvc: "notes-svc", b.ceiling: "ceiling", b.minimal: "minimal"} {
		if p != nil {
			r[p.pid()] = name
		}
	}
	return r
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// static is the script-argument function of workloads without arguments.
func static() func(bool) []string { return func(bool) []string { return nil } }

// runWorkloads measures every HTTP workload and its ceiling, records the
// services' memory, and profiles the misses.
func (b *bench) runWorkloads(ctx context.Context, caps map[string]captured) error {
	threads := strconv.Itoa(b.cfg.Threads)
	lua := func(name string) string { return name }
	notesArgs := func(mode, arg string) func(bool) []string {
		return func(bool) []string { return []string{b.dataFile("notes.tsv"), threads, mode, arg} }
	}
	type spec struct {
		id, title, service string
		target             float64
		http               httpWorkload
		ceilingHTTP        *httpWorkload // bare Gin
		// minimal: the ceiling is the minimal notes server answering the
		// same requests; pgbench on db then gives the database's own
		// figure beside it.
		minimal bool
		db      string // pgbench database
		vars    func() map[string]string
	}
	notesVars := func(withNotes bool) func() map[string]string {
		return func() map[string]string {
			v := map[string]string{}
			for i, a := range b.notes {
				v[fmt.Sprintf("acc_%d", i+1)] = a.accountID
				if withNotes {
					v[fmt.Sprintf("note_%d", i+1)] = a.noteID
				}
			}
			return v
		}
	}
	specs := []spec{
		{id: "eod_hit", title: "marketdata `/v1/eod` cache hit (2 symbols, 100 records)", service: "marketdata-svc", target: 0.8,
			http:        httpWorkload{url: b.mdURL(b.hitQuery()), script: lua("static.lua"), args: static()},
			ceilingHTTP: &httpWorkload{url: b.ceilingURL(b.hitQuery()), script: lua("static.lua"), args: static()}},
		{id: "eod_miss", title: "marketdata `/v1/eod` cache miss (distinct queries)", service: "marketdata-svc", target: 0.5,
			http: httpWorkload{url: b.mdURL(""), script: lua("eod_miss.lua"), args: func(warmup bool) []string {
				offset := "1000000"
				if warmup {
					offset = "0"
				}
				return []string{b.dataFile("eod_miss.tsv"), threads, offset, b.mdKey}
			}},
			db: marketdataDB,
			vars: func() map[string]string {
				v := map[string]string{}
				for i, p := range b.pairs {
					v[fmt.Sprintf("syms_%d", i+1)] = "{" + p + "}"
				}
				return v
			}},
		{id: "tickers", title: "marketdata `/v1/tickers?symbols=` (10 symbols)", service: "marketdata-svc",
			http:        httpWorkload{url: b.mdURL(b.tickersQuery()), script: lua("static.lua"), args: static()},
			ceilingHTTP: &httpWorkload{url: b.ceilingURL(b.tickersQuery()), script: lua("static.lua"), args: static()}},
		{id: "notes_get", title: "notes `GET /v1/notes/{id}`", service: "notes-svc", target: 0.85,
			http:    httpWorkload{url: b.notesURL(""), script: lua("notes.lua"), args: notesArgs("get", "")},
			minimal: true, db: notesDB, vars: notesVars(true)},
		{id: "notes_list_tag", title: "notes list `?" + listTagQuery + "`", service: "notes-svc",
			http:    httpWorkload{url: b.notesURL(""), script: lua("notes.lua"), args: notesArgs("list", listTagQuery)},
			minimal: true, db: notesDB, vars: notesVars(false)},
		{id: "notes_list_q", title: "notes search `?" + listSearchQuery + "`", service: "notes-svc",
			http:    httpWorkload{url: b.notesURL(""), script: lua("notes.lua"), args: notesArgs("list", listSearchQuery)},
			minimal: true, db: notesDB, vars: notesVars(false)},
		{id: "notes_post", title: "notes `POST /v1/notes`", service: "notes-svc", target: 0.8,
			http:    httpWorkload{url: b.notesURL(""), script: lua("notes.lua"), args: notesArgs("post", b.dataFile("post.json"))},
			minimal: true, db: notesDB, vars: notesVars(false)},
	}
	{
		var kept []spec
		for _, s := range specs {
			if b.want(s.id) {
				kept = append(kept, s)
			}
		}
		specs = kept
	}
	pids := map[string]*process{"marketdata-svc": b.mdSvc, "notes-svc": b.notesSvc}
	for _, s := range specs {
		b.logf("workload %s", s.id)
		res := WorkloadResult{ID: s.id, Title: s.title, Target: s.target, Concurrency: b.cfg.Connections}
		svcDB := notesDB
		if s.service == "marketdata-svc" {
			svcDB = marketdataDB
		}
		// Every side of a write workload starts from the same table: the
		// notes an earlier side added would otherwise cost the next one
		// (a fuller GIN pending list to merge, autovacuum on the inserts).
		writes := s.id == "notes_post"
		reset := func() error {
			if !writes {
				return nil
			}
			return b.cleanNotes(ctx)
		}
		// The service side, with its counters.
		counters := b.serviceCounters(ctx, s.service, svcDB)
		measureService := func(d time.Duration, warm bool) (Side, error) {
			if err := reset(); err != nil {
				return Side{}, err
			}
			side, err := b.measureSlice(ctx, s.http, pids[s.service].pid(), s.service, counters, d, warm)
			if err != nil {
				return Side{}, fmt.Errorf("%s: %w", s.id, err)
			}
			return side, nil
		}
		// The HTTP ceiling: the minimal notes server or bare Gin.
		var measureCeiling func(d time.Duration, warm bool) (Side, error)
		switch {
		case s.minimal:
			measureCeiling = func(d time.Duration, warm bool) (Side, error) {
				if err := reset(); err != nil {
					return Side{}, err
				}
				c, err := b.measureSlice(ctx, s.http.at(b.minimalURL("")), b.minimal.pid(), minimalWhat, nil, d, warm)
				if err != nil {
					return Side{}, fmt.Errorf("%s ceiling: %w", s.id, err)
				}
				return c, nil
			}
		case s.ceilingHTTP != nil:
			measureCeiling = func(d time.Duration, warm bool) (Side, error) {
				c, err := b.measureSlice(ctx, *s.ceilingHTTP, b.ceiling.pid(), "bare Gin handler, same bytes", nil, d, warm)
				if err != nil {
					return Side{}, fmt.Errorf("%s ceiling: %w", s.id, err)
				}
				return c, nil
			}
		}
		// A workload held to a target against an HTTP ceiling is measured
		// in rounds, the service and its ceiling side by side, so that the
		// machine's drift over a run falls on both sides of each round's
		// ratio. Within a round each side runs in slices (BENCH_SLICES)
		// that alternate with the other side's, each pair in the opposite
		// order to the one before (service, ceiling, ceiling, service,
		// ...), so that a round compares the two over the same stretch of
		// the machine's time rather than over two stretches one after the
		// other; each side warms up before its first slice of a round.
		// The median round stands for the workload.
		rounds, slices, sliceLen := 1, 1, b.cfg.Duration
		if s.target > 0 && measureCeiling != nil {
			rounds, slices, sliceLen = b.cfg.Rounds, b.cfg.Slices, sliceLength
			if writes {
				// Each slice of a write workload starts from a reset table,
				// and the reset (VACUUM ANALYZE of the notes) takes
				// PostgreSQL about 5 s: thirty slices a side would spend
				// some 45 minutes resetting. Its rounds keep five 2 s
				// slices a side, which its margin over the target allows.
				slices, sliceLen = writeSlices, writeSliceLength
			}
			res.Slices, res.SliceSeconds = slices, sliceLen.Seconds()
		}
		type sides struct{ service, ceiling Side }
		var measured []sides
		for i := 0; i < rounds; i++ {
			var parts [2][]Side
			for k := 0; k < slices; k++ {
				for _, o := range sliceOrder(i, k) {
					measure := measureService
					if o == 1 {
						measure = measureCeiling
					}
					if measure == nil {
						continue
					}
					side, err := measure(sliceLen, k == 0)
					if err != nil {
						return err
					}
					parts[o] = append(parts[o], side)
				}
			}
			var pair sides
			for o, into := range []*Side{&pair.service, &pair.ceiling} {
				if len(parts[o]) == 0 {
					continue
				}
				side, err := joinSlices(parts[o])
				if err != nil {
					return fmt.Errorf("%s: %w", s.id, err)
				}
				*into = side
			}
			measured = append(measured, pair)
		}
		ratioOf := func(p sides) float64 {
			if p.ceiling.RPS <= 0 {
				return 0
			}
			return p.service.RPS / p.ceiling.RPS
		}
		if rounds > 1 {
			for _, p := range measured {
				res.Rounds = append(res.Rounds, Round{ServiceRPS: p.service.RPS, CeilingRPS: p.ceiling.RPS, Ratio: ratioOf(p)})
			}
			b.logf("%s: ratios of %d rounds: %s", s.id, rounds, roundRatios(res.Rounds))
		}
		median := medianRound(measured, ratioOf)
		res.Service = median.service
		if measureCeiling != nil {
			c := median.ceiling
			res.Ceiling = &c
		}
		if s.ceilingHTTP == nil {
			// pgbench on the captured SQL: the ceiling of a workload with
			// no HTTP one, else the database's own figure beside it.
			c, ok := caps[s.id]
			if !ok {
				return fmt.Errorf("%s: no captured SQL", s.id)
			}
			files, defines, first, err := b.pgbenchScripts(c, len(b.notes), s.vars())
			if err != nil {
				return err
			}
			res.SQL = first
			if err := reset(); err != nil {
				return err
			}
			cs, err := b.measurePgbench(ctx, s.id, s.db, files, defines)
			if err != nil {
				return fmt.Errorf("%s database figure: %w", s.id, err)
			}
			if res.Ceiling == nil {
				res.Ceiling = &cs
			} else {
				res.Database = &cs
			}
		}
		res.grade()
		b.logf("%s: %.0f req/s vs ceiling %.0f/s: ratio %.2f (%s)", s.id, res.Service.RPS, res.Ceiling.RPS, res.Ratio, res.Status)
		if res.Database != nil {
			b.logf("%s: the database's own figure (pgbench, same SQL) %.0f/s: service at %.2f of it", s.id, res.Database.RPS, res.DatabaseRatio)
		}
		b.res.Workloads = append(b.res.Workloads, res)
	}
	for _, name := range []string{"marketdata-svc", "notes-svc"} {
		p := pids[name]
		if p == nil {
			continue
		}
		hwm, rss, err := memStatus(p.pid())
		if err != nil {
			return err
		}
		maxLoad := 0.0
		for _, w := range b.res.Workloads {
			if w.Service.What == name && w.Service.MaxRSSMB > maxLoad {
				maxLoad = w.Service.MaxRSSMB
			}
		}
		m := MemoryResult{Service: name, VmHWMMB: mb(hwm), VmRSSMB: mb(rss), MaxRSSUnderLoadMB: maxLoad, TargetMB: 150}
		m.Status = "pass"
		if m.VmHWMMB >= m.TargetMB {
			m.Status = "miss"
		}
		b.res.Memory = append(b.res.Memory, m)
	}
	// Profiles of the misses, after every measurement so they cannot
	// disturb one.
	for i := range b.res.Workloads {
		w := &b.res.Workloads[i]
		if w.Status != "miss" {
			continue
		}
		var spec0 spec
		for _, s := range specs {
			if s.id == w.ID {
				spec0 = s
			}
		}
		pprofPort := b.cfg.Ports.MarketdataPprof
		if w.Service.What == "notes-svc" {
			pprofPort = b.cfg.Ports.NotesPprof
		}
		prof, err := b.profile(ctx, w.ID, w.Service.What, pprofPort, spec0.http)
		if err != nil {
			b.logf("profile %s: %v", w.ID, err)
			w.Profile = &Profile{Error: err.Error()}
			continue
		}
		w.Profile = prof
	}
	return nil
}

// profile reruns a workload's HTTP side while the service's pprof listener
// records a CPU profile, and keeps the top entries.
func (b *bench) profile(ctx context.Context, id, service string, port int, w httpWorkload) (*Profile, error) {
	secs := max(2, b.cfg.ProfileSecs)
	file := filepath.Join(b.cfg.Out, "profiles", id+".cpu.pprof")
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", port, secs)
	errc := make(chan error, 1)
	go func() {
		_, _, err := b.wrkRun(ctx, time.Duration(secs+2)*time.Second, w, true, false)
		errc <- err
	}()
	time.Sleep(time.Second)
	resp, err := http.Get(url)
	if err != nil {
		<-errc
		return nil, err
	}
	data, err := readAllClose(resp)
	if werr := <-errc; err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return nil, err
	}
	b.r.commands = append(b.r.commands, fmt.Sprintf("curl -o %s '%s'  # while the workload runs", file, url))
	top, err := b.r.output(ctx, cmdSpec{name: "go", args: []string{"tool", "pprof", "-top", "-nodecount=20", b.bin(service), file}})
	if err != nil {
		return nil, err
	}
	cum, err := b.r.output(ctx, cmdSpec{name: "go", args: []string{"tool", "pprof", "-top", "-cum", "-nodecount=45", b.bin(service), file}})
	if err != nil {
		return nil, err
	}
	return &Profile{File: file, Top: strings.TrimSpace(top), Cum: pprofBody(cum)}, nil
}

// pprofBody drops the header lines pprof repeats before the table.
func pprofBody(out string) string {
	if i := strings.Index(out, "      flat  flat%"); i >= 0 {
		return strings.TrimSpace(out[i:])
	}
	return strings.TrimSpace(out)
}

// scrapeCounters sums the counters of the service's /metrics whose names
// start with one of the prefixes, over all label sets.
func scrapeCounters(url string, prefixes ...string) map[string]float64 {
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, p := range prefixes {
			if !strings.HasPrefix(line, p) {
				continue
			}
			name, rest, _ := strings.Cut(line, " ")
			if i := strings.IndexByte(name, '{'); i >= 0 {
				name = name[:i]
			}
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				continue
			}
			if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
				out[name] += v
			}
		}
	}
	return out
}

func readAllClose(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("pprof: status %d: %.200s", resp.StatusCode, data)
	}
	return data, nil
}
