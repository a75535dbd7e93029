package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

const (
	intradayDB       = "bench_intraday"
	intradayRefDB    = "bench_intraday_schema"
	intradayImportDB = "bench_import_intraday"
	intradayPrefix   = "IB"
	intradayExchange = "XNAS" // a New York session: 09:30-16:00, 390 minutes
	intradayMinutes  = 390
)

// intradayFirstDay and intradayDay mirror benchdata's calendar (weekdays
// of 2025 from Monday 6 January); the pgbench prelude below computes the
// same days.
var intradayFirstDay = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

func intradayDay(d int) time.Time { return intradayFirstDay.AddDate(0, 0, d/5*7+d%5) }

func intradaySymbol(i int) string { return fmt.Sprintf("%s%04d", intradayPrefix, i) }

// IntradayDataset is the minute-bar dataset of intraday_query.
type IntradayDataset struct {
	DB         string `json:"db"`
	Rows       int64  `json:"rows_estimate"` // pg_class.reltuples of the partitions, after VACUUM ANALYZE
	Symbols    int    `json:"symbols"`
	Days       int    `json:"days"`
	From       string `json:"from"`
	To         string `json:"to"`
	Partitions int    `json:"partitions"`
	SizeMB     int64  `json:"size_mb"`
	Reused     bool   `json:"reused"`
	// The load (absent when reused): partitions created with the loader's
	// own DDL, then benchdata streamed into COPY ... FREEZE, one month per
	// job, rows in primary-key order; then VACUUM ANALYZE.
	LoadSeconds       float64 `json:"load_seconds,omitempty"`
	CopySeconds       float64 `json:"copy_seconds,omitempty"`
	VacuumSeconds     float64 `json:"vacuum_analyze_seconds,omitempty"`
	LoadRowsPerSecond float64 `json:"load_rows_per_second,omitempty"`
	LoadJobs          int     `json:"load_jobs,omitempty"`
	LoadAvgBefore     string  `json:"loadavg_before_load,omitempty"`
	LoadAvgAfter      string  `json:"loadavg_after_load,omitempty"`
	SchemaCheck       string  `json:"schema_check,omitempty"`
	// CheckSeconds is the time this run spent making sure the dataset is
	// there (the whole load on a cold run).
	CheckSeconds float64 `json:"setup_seconds"`
}

func (b *bench) intradayMonths() []time.Time {
	var out []time.Time
	for d := range b.cfg.IntradayDays {
		t := intradayDay(d)
		m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		if len(out) == 0 || !out[len(out)-1].Equal(m) {
			out = append(out, m)
		}
	}
	return out
}

// partitionDDL is the statement ingest.ensureIntradayPartitions runs
// for month m (kept in step with it), so the bench's partitions are the
// service's own.
func partitionDDL(m time.Time) (name, ddl string) {
	name = fmt.Sprintf("intraday_bars_%04d_%02d", m.Year(), int(m.Month()))
	return name, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF intraday_bars FOR VALUES FROM ('%s') TO ('%s')`,
		name, m.Format("2006-01-02 15:04:05+00"), m.AddDate(0, 1, 0).Format("2006-01-02 15:04:05+00"))
}

// prepareIntraday makes sure bench_intraday holds the minute bars (kept
// between runs under a marker comment, like the other datasets).
func (b *bench) prepareIntraday(ctx context.Context) (*IntradayDataset, error) {
	t0 := time.Now()
	ds := &IntradayDataset{DB: intradayDB, Symbols: b.cfg.IntradaySymbols, Days: b.cfg.IntradayDays,
		From: intradayDay(0).Format(time.DateOnly), To: intradayDay(b.cfg.IntradayDays - 1).Format(time.DateOnly)}
	marker := fmt.Sprintf("tickerdesk-bench intraday: %d symbols x %d days x %d minutes, benchdata intraday --seed %d",
		b.cfg.IntradaySymbols, b.cfg.IntradayDays, intradayMinutes, b.cfg.Seed)
	current, err := b.db.comment(ctx, intradayDB)
	if err != nil {
		return nil, err
	}
	env := b.marketdataEnv(intradayDB)
	if b.cfg.Fresh || current != marker {
		b.logf("intraday dataset: loading (%s)", marker)
		if err := b.loadIntraday(ctx, ds); err != nil {
			return nil, err
		}
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("COMMENT ON DATABASE %s IS %s", intradayDB, lit(marker))); err != nil {
			return nil, err
		}
	} else {
		b.logf("intraday dataset: present (%s)", marker)
		ds.Reused = true
		if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: env}); err != nil {
			return nil, err
		}
	}
	rows, err := b.db.query(ctx, intradayDB, `SELECT count(*), coalesce(sum(c.reltuples), 0)::bigint,
		(coalesce(sum(pg_total_relation_size(c.oid)), 0) / (1024 * 1024))::bigint
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'intraday_bars'::regclass`)
	if err != nil {
		return nil, err
	}
	ds.Partitions, _ = strconv.Atoi(rows[0][0])
	ds.Rows, _ = strconv.ParseInt(rows[0][1], 10, 64)
	ds.SizeMB, _ = strconv.ParseInt(rows[0][2], 10, 64)
	want := int64(b.cfg.IntradaySymbols * b.cfg.IntradayDays * intradayMinutes)
	if math.Abs(float64(ds.Rows-want)) > 0.02*float64(want) {
		return nil, fmt.Errorf("bench_intraday holds about %d minute bars, want %d (BENCH_FRESH=1 reloads)", ds.Rows, want)
	}
	ds.CheckSeconds = time.Since(t0).Seconds()
	return ds, nil
}

// loadIntraday recreates bench_intraday and loads it: the migrations, one
// New York exchange and its tickers, every monthly partition created first
// with the loader's DDL, then the generated minutes streamed into COPY
// FREEZE of each partition (TRUNCATE in the same transaction is what
// allows FREEZE, so VACUUM has nothing to rewrite), months in parallel.
// The rows of a month arrive in primary-key order, so the index is
// appended to at its right edge rather than rebuilt; the schema stays
// exactly the migration's (checked against a fresh database afterwards).
func (b *bench) loadIntraday(ctx context.Context, ds *IntradayDataset) error {
	t0 := time.Now()
	ds.LoadAvgBefore = loadAvg()
	if err := b.db.recreate(ctx, intradayDB); err != nil {
		return err
	}
	env := b.marketdataEnv(intradayDB)
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: env}); err != nil {
		return err
	}
	setup := []string{
		fmt.Sprintf(`INSERT INTO exchanges (mic, name, acronym, country_code, country, city, timezone, currency)
			VALUES (%s, 'NASDAQ - ALL MARKETS', 'NASDAQ', 'US', 'USA', 'New York', 'America/New_York', 'USD') ON CONFLICT DO NOTHING`, lit(intradayExchange)),
		fmt.Sprintf(`INSERT INTO tickers (symbol, name, exchange_mic, has_intraday)
			SELECT %s || lpad(g::text, 4, '0'), 'Bench intraday ' || g, %s, true FROM generate_series(1, %d) g`,
			lit(intradayPrefix), lit(intradayExchange), b.cfg.IntradaySymbols),
	}
	months := b.intradayMonths()
	for _, m := range months {
		_, ddl := partitionDDL(m)
		setup = append(setup, ddl)
	}
	if err := b.db.exec(ctx, intradayDB, strings.Join(setup, ";\n")); err != nil {
		return err
	}
	jobs := max(1, b.cfg.IntradayLoadJobs)
	ds.LoadJobs = jobs
	t1 := time.Now()
	cmds := make([]*commandRun, len(months))
	for i, m := range months {
		name, _ := partitionDDL(m)
		pipeline := fmt.Sprintf("set -o pipefail; %s intraday -symbols %d -days %d -prefix %s -seed %d -month %s -header=false -out - | "+
			"psql %s -X -q -v ON_ERROR_STOP=1 -1 -c %s -c %s -c %s",
			shellQuote(b.benchTool("benchdata")), b.cfg.IntradaySymbols, b.cfg.IntradayDays, intradayPrefix, b.cfg.Seed, m.Format("2006-01"),
			shellQuote(b.db.dbURL(intradayDB)), shellQuote("SET synchronous_commit = off"), shellQuote("TRUNCATE "+name),
			shellQuote(`\copy `+name+` (symbol, ts, open, high, low, close, volume) FROM pstdin WITH (FORMAT csv, FREEZE)`))
		cmds[i] = &commandRun{cmd: b.r.command(ctx, cmdSpec{name: "bash", args: []string{"-c", pipeline}}), label: name}
	}
	if err := runParallel(cmds, jobs); err != nil {
		return err
	}
	ds.CopySeconds = time.Since(t1).Seconds()
	t2 := time.Now()
	if err := b.db.exec(ctx, intradayDB, "VACUUM ANALYZE intraday_bars"); err != nil {
		return err
	}
	ds.VacuumSeconds = time.Since(t2).Seconds()
	ds.LoadSeconds = time.Since(t0).Seconds()
	ds.LoadAvgAfter = loadAvg()
	rows := float64(b.cfg.IntradaySymbols * b.cfg.IntradayDays * intradayMinutes)
	ds.LoadRowsPerSecond = rows / ds.LoadSeconds
	b.logf("intraday dataset: %.0f minute bars in %.0fs (COPY %.0fs, VACUUM ANALYZE %.0fs): %.0f rows/s; load average %s before, %s after",
		rows, ds.LoadSeconds, ds.CopySeconds, ds.VacuumSeconds, ds.LoadRowsPerSecond, ds.LoadAvgBefore, ds.LoadAvgAfter)
	check, err := b.checkIntradaySchema(ctx, months[0])
	if err != nil {
		return err
	}
	ds.SchemaCheck = check
	return nil
}

// commandRun is one command of a parallel batch.
type commandRun struct {
	cmd   interface{ CombinedOutput() ([]byte, error) }
	label string
}

// runParallel runs the commands, at most jobs at once, and returns the
// first failure.
func runParallel(cmds []*commandRun, jobs int) error {
	sem := make(chan struct{}, jobs)
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if out, err := c.cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %w: %s", c.label, err, lastLines(string(out), 6))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkIntradaySchema compares psql's \d+ of intraday_bars and of its
// first partition with the same in a freshly migrated database whose
// partition was created by the loader's DDL, and checks that every
// partition has its primary key.
func (b *bench) checkIntradaySchema(ctx context.Context, first time.Time) (string, error) {
	if err := b.db.recreate(ctx, intradayRefDB); err != nil {
		return "", err
	}
	defer b.db.exec(context.WithoutCancel(ctx), "postgres", "DROP DATABASE IF EXISTS "+intradayRefDB+" WITH (FORCE)")
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: b.marketdataEnv(intradayRefDB), quiet: true}); err != nil {
		return "", err
	}
	part, ddl := partitionDDL(first)
	if err := b.db.exec(ctx, intradayRefDB, ddl); err != nil {
		return "", err
	}
	if err := b.sameTables(ctx, intradayDB, intradayRefDB, []string{"intraday_bars", part}, withoutPartitionList); err != nil {
		return "", err
	}
	missing, err := b.db.value(ctx, intradayDB, `SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'intraday_bars'::regclass
		AND NOT EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = i.inhrelid AND x.indisprimary AND x.indisvalid)`)
	if err != nil {
		return "", err
	}
	if missing != "0" {
		return "", fmt.Errorf("%s partitions of intraday_bars have no valid primary key", missing)
	}
	return fmt.Sprintf("`\\d+ intraday_bars` (partition list aside) and `\\d+ %s` equal those of a freshly migrated database with the loader's partition DDL; every partition has a valid primary key", part), nil
}

// sameTables compares psql's \d+ of each table of db with the same in
// ref, a freshly migrated database, after normalize (which drops what may
// differ, such as a partition list), and names the first that differs.
func (b *bench) sameTables(ctx context.Context, db, ref string, tables []string, normalize func(string) string) error {
	for _, table := range tables {
		var got [2]string
		for i, d := range []string{db, ref} {
			out, err := b.r.output(ctx, cmdSpec{name: "psql", quiet: true, args: []string{b.db.dbURL(d), "-X", "-c", `\d+ ` + table}})
			if err != nil {
				return err
			}
			got[i] = normalize(out)
		}
		if got[0] != got[1] {
			return fmt.Errorf("\\d+ %s of %s differs from a freshly migrated database:\n%s\n---\n%s", table, db, got[0], got[1])
		}
	}
	return nil
}

// withoutPartitionList drops the "Partitions:" list of \d+, which names
// every month.
func withoutPartitionList(s string) string {
	var out []string
	in := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, "Partitions:"):
			in = true
			continue
		case in && strings.HasPrefix(line, " "):
			continue
		}
		in = false
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// intradaySpread is what the cache-miss requests and pgbench walk: the
// symbols of the pgbench scripts (one per account slot, spread over all
// symbols) and every trading day.
func (b *bench) intradaySpread() (syms, days []string) {
	n := min(b.cfg.Accounts, b.cfg.IntradaySymbols)
	step := max(1, b.cfg.IntradaySymbols/n)
	for i := range n {
		syms = append(syms, intradaySymbol(1+i*step))
	}
	for d := range b.cfg.IntradayDays {
		days = append(days, intradayDay(d).Format(time.DateOnly))
	}
	// The Lua walk takes request g to (syms[g mod #syms], days[g mod
	// #days]): with the counts coprime, #syms x #days requests in a row
	// are all distinct and symbol and day both spread uniformly at once,
	// as pgbench's random picks do.
	for gcd(len(syms), len(days)) != 1 {
		days = days[:len(days)-1]
	}
	return syms, days
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// repeatedSymbol reports how many times v, an array literal, holds sym and
// nothing else (0 if anything else): the per-symbol early-close array.
func repeatedSymbol(v, sym string) int {
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return 0
	}
	parts := strings.Split(v[1:len(v)-1], ",")
	for _, p := range parts {
		if p != sym {
			return 0
		}
	}
	return len(parts)
}

// intradayPrelude picks what the Lua walk's lists hold, at random: one
// of nsyms symbols (symbol 1 + k*step) and a trading day. The symbol is
// built by a small SELECT into :sym and, when the service passes the
// symbol once per early close, :esyms (early copies); pgbench cannot build
// text itself. That keeps one script, so each connection prepares the
// service's statements once, as the service does: one script per symbol
// made every connection prepare them again for each symbol, which cost
// the database about three times the work per transaction (measured: 70
// to 100 against 256 to 324 transactions a second on 2 busy cores).
// Day i is (i/5)*7 + i%5 days after Monday 6 January 2025, written
// YYYYMMDD (which PostgreSQL reads as a date) via the months of 2025.
func intradayPrelude(days, nsyms, step, early int) string {
	esyms := ""
	if early > 1 {
		esyms = fmt.Sprintf(", '{' || rtrim(repeat('%s' || lpad(:sn::text, 4, '0') || ',', %d), ',') || '}' AS esyms", intradayPrefix, early)
	}
	return fmt.Sprintf("\\set k random(0, %d)\n\\set sn 1 + :k * %d\nSELECT '{%s' || lpad(:sn::text, 4, '0') || '}' AS sym%s \\gset\n",
		nsyms-1, step, intradayPrefix, esyms) + intradayDayPrelude(days)
}

func intradayDayPrelude(days int) string {
	starts := []int{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334} // day of 2025 each month starts on
	var month, start strings.Builder
	for i := len(starts) - 1; i >= 1; i-- {
		fmt.Fprintf(&month, " WHEN :o >= %d THEN %d", starts[i], i+1)
		fmt.Fprintf(&start, " WHEN :o >= %d THEN %d", starts[i], starts[i])
	}
	return fmt.Sprintf("\\set i random(0, %d)\n\\set o :i / 5 * 7 + :i %% 5 + 5\n"+
		"\\set m CASE%s ELSE 1 END\n\\set s CASE%s ELSE 0 END\n\\set day 20250000 + :m * 100 + :o - :s + 1\n",
		days-1, month.String(), start.String())
}

func (b *bench) intradayURL(sym, day string) string {
	return b.mdURL("/v1/intraday?access_key=" + b.mdKey + "&symbols=" + sym + "&interval=1hour&date_from=" + day + "&date_to=" + day)
}

// runIntradayQuery measures /v1/intraday, one symbol and one day in 1hour
// buckets, every request a cache miss, against pgbench running the SQL the
// service ran for such a request with the same symbols and days.
func (b *bench) runIntradayQuery(ctx context.Context) error {
	b.logf("workload intraday_query")
	ds, err := b.prepareIntraday(ctx)
	if err != nil {
		return fmt.Errorf("intraday dataset: %w", err)
	}
	b.res.Intraday = ds
	env := b.marketdataEnv(intradayDB)
	key, err := b.createKey(ctx, b.bin("marketdata-svc"), env, "bench-intraday",
		"--rate-per-second", fmt.Sprint(b.cfg.MDRate), "--monthly-quota", fmt.Sprint(b.cfg.MDQuota))
	if err != nil {
		return err
	}
	b.mdKey = key
	b.r.addSecret(key, "$MARKETDATA_INTRADAY_KEY")
	syms, days := b.intradaySpread()
	var sb strings.Builder
	for _, s := range syms {
		sb.WriteString("sym\t" + s + "\n")
	}
	for _, d := range days {
		sb.WriteString("day\t" + d + "\n")
	}
	dataFile := b.dataFile("intraday.tsv")
	if err := os.WriteFile(dataFile, []byte(sb.String()), 0o600); err != nil {
		return err
	}
	pick := func(i int) (string, string) { return syms[i%len(syms)], days[(len(days)/2+i*37)%len(days)] }
	p := probe{workload: "intraday_query", db: intradayDB,
		send: func(ctx context.Context, i int) error {
			sym, day := pick(i)
			body, err := httpCall(ctx, "GET", b.intradayURL(sym, day), "", nil)
			if err == nil && !strings.Contains(string(body), `"symbol":"`+sym+`"`) {
				// An empty page would make both sides cheap: measure nothing.
				err = fmt.Errorf("intraday probe %s %s: no bars in the answer: %.200s", sym, day, body)
			}
			return err
		},
		bind: func(i, script int) sqlcapture.Binding {
			sym, day := pick(i)
			return func(v string) string {
				switch {
				case v == "{"+sym+"}":
					return "sym"
				case v == day:
					return "day"
				case repeatedSymbol(v, sym) > 1:
					// The symbol of each early close ($9): the same one.
					return "esyms"
				}
				return ""
			}
		},
	}
	start := func(phase string) (*process, error) {
		svc, err := b.serve(ctx, "marketdata-svc", "MARKETDATA_", b.marketdataEnv(intradayDB), b.cfg.Ports.Marketdata, b.cfg.Ports.MarketdataPprof, "intraday-", phase)
		if err != nil {
			return nil, err
		}
		return svc, svc.waitHTTP(ctx, b.mdURL("/readyz"), 30*time.Second)
	}

	// Capture with statement logging on, then measure a fresh instance.
	if err := b.db.exec(ctx, "postgres", fmt.Sprintf("ALTER DATABASE %s SET log_statement = 'all'", intradayDB)); err != nil {
		return err
	}
	b.mdSvc, err = start("probe")
	var caps map[string]captured
	if err == nil {
		caps, err = b.captureServiceProbes(ctx, []probe{p})
	}
	b.stopServices()
	if rerr := b.db.exec(ctx, "postgres", fmt.Sprintf("ALTER DATABASE %s RESET log_statement", intradayDB)); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("capture the service's SQL: %w", err)
	}
	if _, err := b.r.output(ctx, cmdSpec{name: "redis-cli", args: []string{"-u", b.cfg.RedisURL, "FLUSHDB"}}); err != nil {
		return err
	}
	if b.mdSvc, err = start("run"); err != nil {
		return err
	}
	defer b.stopServices()

	res := WorkloadResult{ID: "intraday_query", Concurrency: b.cfg.Connections, Target: 0.5,
		Title: fmt.Sprintf("marketdata `/v1/intraday` 1hour, one symbol-day, cache miss (%s minute bars)", humanCount(ds.Rows))}
	threads := strconv.Itoa(b.cfg.Threads)
	// The warm-up starts at the beginning of the cycle of distinct
	// requests and the measurement half a cycle later, so the measured
	// requests are none the warm-up sent (12,850 apart by default).
	w := httpWorkload{url: b.mdURL(""), script: "intraday.lua", args: func(warmup bool) []string {
		offset := strconv.Itoa(len(syms) * len(days) / 2)
		if warmup {
			offset = "0"
		}
		return []string{dataFile, threads, offset, b.mdKey}
	}}
	side, err := b.measureHTTP(ctx, w, b.mdSvc.pid(), "marketdata-svc", b.serviceCounters(ctx, "marketdata-svc", intradayDB))
	if err != nil {
		return fmt.Errorf("intraday_query: %w", err)
	}
	res.Service = side
	sym0, _ := pick(0)
	early := 0
	c := caps["intraday_query"]
	for _, st := range c.stmts {
		for _, v := range st.Params {
			if v != nil {
				early = max(early, repeatedSymbol(*v, sym0))
			}
		}
	}
	c.probe.prelude = intradayPrelude(len(days), len(syms), b.cfg.IntradaySymbols/len(syms), early)
	files, defines, first, err := b.pgbenchScripts(c, 1, nil)
	if err != nil {
		return err
	}
	res.SQL = first
	cs, err := b.measurePgbench(ctx, "intraday_query", intradayDB, files, defines)
	if err != nil {
		return fmt.Errorf("intraday_query database figure: %w", err)
	}
	res.Ceiling = &cs
	res.grade()
	b.logf("intraday_query: %.0f req/s (p50 %.2f ms, p99 %.2f ms) vs pgbench %.0f/s (p50 %.2f ms, p99 %.2f ms): ratio %.2f (%s)",
		res.Service.RPS, res.Service.P50Ms, res.Service.P99Ms, cs.RPS, cs.P50Ms, cs.P99Ms, res.Ratio, res.Status)
	if res.Status == "miss" {
		prof, err := b.profile(ctx, res.ID, "marketdata-svc", b.cfg.Ports.MarketdataPprof, w)
		if err != nil {
			prof = &Profile{Error: err.Error()}
		}
		res.Profile = prof
	}
	b.res.Workloads = append(b.res.Workloads, res)
	return nil
}

func humanCount(n int64) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return strconv.FormatInt(n, 10)
}

// runIntradayImport measures `marketdata-svc import --kind intraday` of a
// generated minute file against psql's \copy of the same file into a plain
// table of intraday_bars' shape, each in a freshly migrated database.
func (b *bench) runIntradayImport(ctx context.Context) error {
	b.logf("workload intraday_import")
	n := b.cfg.IntradayImportSymbols
	rows := n * b.cfg.IntradayDays * intradayMinutes
	file := filepath.Join(b.cfg.Out, fmt.Sprintf("intraday-%dx%d.csv", n, b.cfg.IntradayDays))
	res := ImportResult{ID: "intraday_import", Rows: rows, Target: 0.5,
		Layout:  "Symbol,Timestamp,Open,High,Low,Close,Volume (one row per symbol and minute, RFC 3339 UTC timestamps)",
		Ceiling: ImportCeiling{What: "COPY of the same file into a plain table of intraday_bars' shape (LIKE intraday_bars INCLUDING ALL: same columns and primary key, not partitioned)"}}
	env, drop, err := b.prepareImport(ctx, &res, intradayImportDB, file,
		"intraday", "-symbols", fmt.Sprint(n), "-days", fmt.Sprint(b.cfg.IntradayDays), "-prefix", "IMPI")
	if err != nil {
		return err
	}
	defer drop()
	if err := b.db.exec(ctx, intradayImportDB, "CREATE TABLE intraday_copy (LIKE intraday_bars INCLUDING ALL)"); err != nil {
		return err
	}
	t0 := time.Now()
	if err := b.db.exec(ctx, intradayImportDB, fmt.Sprintf(`\copy intraday_copy (symbol, ts, open, high, low, close, volume) FROM %s WITH (FORMAT csv, HEADER true)`, lit(file))); err != nil {
		return fmt.Errorf("copy ceiling: %w", err)
	}
	res.CopySeconds = time.Since(t0).Seconds()
	res.CopyCommand = b.r.commands[len(b.r.commands)-1]
	if got, err := b.db.value(ctx, intradayImportDB, "SELECT count(*) FROM intraday_copy"); err != nil || got != fmt.Sprint(rows) {
		return fmt.Errorf("copy loaded %s rows, want %d (%v)", got, rows, err)
	}
	for _, sql := range []string{"DROP TABLE intraday_copy", "VACUUM ANALYZE"} {
		if err := b.db.exec(ctx, intradayImportDB, sql); err != nil {
			return err
		}
	}
	out, err := b.timeImport(ctx, &res, env, "import", "--kind", "intraday", file)
	if err != nil {
		return err
	}
	res.ImportOutput = strings.TrimSpace(lastLines(out, 1))
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "rows/s") || strings.Contains(line, "bars") {
			res.ImportOutput = strings.TrimSpace(line)
		}
	}
	if got, err := b.db.value(ctx, intradayImportDB, "SELECT count(*) FROM intraday_bars"); err != nil || got != fmt.Sprint(rows) {
		return fmt.Errorf("import loaded %s rows, want %d (%v)", got, rows, err)
	}
	b.score(&res)
	b.res.IntradayImport = &res
	return nil
}

// renderIntraday writes the intraday section of BENCHMARKS.md.
func renderIntraday(w func(string, ...any), r Results) {
	w("### Intraday\n\n")
	var phases []string
	for _, id := range []string{"intraday_import", "intraday_query"} {
		if secs, ok := r.PhaseSeconds[id]; ok {
			phases = append(phases, fmt.Sprintf("%s %.0f s", id, secs))
		}
	}
	if len(phases) > 0 {
		w("Wall time of the phases in this run (intraday_query's includes its dataset check or load): %s.\n\n", strings.Join(phases, ", "))
	}
	if ds := r.Intraday; ds != nil {
		w("**Dataset of intraday_query:** %s minute bars (%d symbols × %d trading days × %d minutes, %s to %s, New York session) in %d monthly partitions of `intraday_bars`, %d MB with indexes, database `%s`. ",
			humanCount(ds.Rows), ds.Symbols, ds.Days, intradayMinutes, ds.From, ds.To, ds.Partitions, ds.SizeMB, ds.DB)
		if ds.Reused {
			w("Reused from an earlier run (checked in %.1f s).", ds.CheckSeconds)
		} else {
			w("Loaded in this run in %.0f s (%.0f rows/s): the partitions created with the loader's own DDL, then `benchdata intraday` streamed into `COPY ... FREEZE` of each partition, %d months at a time, rows in primary-key order (COPY %.0f s), then `VACUUM ANALYZE` (%.0f s); load average %s before, %s after. Schema: %s.",
				ds.LoadSeconds, ds.LoadRowsPerSecond, ds.LoadJobs, ds.CopySeconds, ds.VacuumSeconds, ds.LoadAvgBefore, ds.LoadAvgAfter, ds.SchemaCheck)
		}
		w(" Every request of the workload is one symbol and one day (`interval=1hour&date_from=D&date_to=D`: 390 minutes read by the partition's primary key, 7 buckets), symbol and day both varying, so each one misses the cache; pgbench runs the captured SQL in one script that picks one of the same symbols and a trading day at random (wrk walks the same symbols and days: request g asks for symbol g mod 100 and day g mod 257, so both vary on every request). No cache-hit variant is reported (`eod_hit` measures the cache path).\n\n")
	}
	if im := r.IntradayImport; im != nil {
		w("**intraday_import:** %d rows (%.1f MB, %s): %s %.2f s (%s rows/s); `marketdata-svc import --kind intraday` %.2f s (%s rows/s, %.2f s CPU in the importer, max RSS %.0f MB): ratio %s× (target ≥ %.1f×, as for the EOD import). Importer output: `%s`\n\n",
			im.Rows, im.FileMB, im.Layout, im.Ceiling.What, im.CopySeconds, f0(im.CopyRowsPerSec), im.ImportSeconds, f0(im.ImportRowsPerSec),
			im.ImportCPUSeconds, im.ImportMaxRSSMB, f2(im.Ratio), im.Target, im.ImportOutput)
	}
}
