// Command benchrun is the whole benchmark behind `make bench`: it prepares
// the bench databases (about 10 million EOD rows and 100,000 notes, and
// the scale datasets of 1M and 100M EOD bars), starts
// both services and their ceilings, measures every workload side by side
// with its ceiling in one run, profiles the workloads that miss their
// target, and writes bench/results.json and BENCHMARKS.md.
//
// It runs from scripts/bench.sh, which installs the load generators, builds
// the binaries and starts the local stack. Settings come from BENCH_*
// environment variables (see config).
package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() {
	cmdmain.Run("bench", run)
}

// config is every setting of a run.
type config struct {
	Root        string // repository root
	Out         string // scratch directory (git-ignored)
	AdminURL    string // PostgreSQL URL of database "postgres"
	RedisURL    string // Redis URL of the bench's own logical database
	PGLog       string // PostgreSQL server log, for capturing the services' SQL
	Duration    time.Duration
	Warmup      time.Duration
	Connections int
	Threads     int
	Symbols     int
	Years       int
	Seed        int
	Notes       int
	Accounts    int
	ImportRows  int
	Fresh       bool
	MDRate      int
	MDQuota     int64
	ProfileSecs int
	QuietWait   time.Duration
	Cores       int
	Ports       ports
	// Rounds is how many times a workload with a target measures its
	// service and its HTTP ceiling, alternately (BENCH_ROUNDS). Nine, not
	// five: on a shared 2-core VM the rounds of one run spread from 0.64
	// to 0.90 (eod_hit at 47e635a), wider than the changes they judge.
	Rounds int
	// Slices is how many slices of sliceLength each side of such a round
	// runs in, alternating with the other side's (BENCH_SLICES, 30): a
	// round measures each side for 30 s. See sliceLength for why slices
	// are short and a side has thirty.
	Slices int
	// Only, when not nil, names the workloads to run (BENCH_WORKLOADS):
	// workload ids, "import", "intraday_import", "tenant_scale" and
	// "webhook_delivery". The
	// marketdata dataset and
	// service are prepared only when a marketdata workload is named.
	Only map[string]bool
	// TenantNotes is the notes per account of tenant_scale, at
	// TenantSmall and TenantLarge accounts.
	TenantNotes, TenantSmall, TenantLarge int
	// IntradaySymbols x IntradayDays x 390 minutes is the dataset of
	// intraday_query; IntradayImportSymbols x IntradayDays x 390 the file
	// of intraday_import. IntradayLoadJobs months load at once.
	IntradaySymbols, IntradayDays, IntradayImportSymbols, IntradayLoadJobs int
	// Scale is BENCH_SCALE: "small" measures the scale workloads at the
	// small size alone, "" at both. ScaleConnections is their wrk
	// connections (BENCH_SCALE_CONNECTIONS, 2) and ScaleRounds how many
	// times each is measured at every size (BENCH_SCALE_ROUNDS, 3).
	Scale                         string
	ScaleConnections, ScaleRounds int
}

type ports struct {
	Notes, Marketdata, Ceiling, Minimal, NotesPprof, MarketdataPprof int
}

func (p ports) offset(n int) ports {
	return ports{Notes: p.Notes + n, Marketdata: p.Marketdata + n, Ceiling: p.Ceiling + n, Minimal: p.Minimal + n,
		NotesPprof: p.NotesPprof + n, MarketdataPprof: p.MarketdataPprof + n}
}

func loadConfig(args []string, getenv func(string) string) (config, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	var errs []error
	num := func(k string, def int) int {
		v, err := strconv.Atoi(env(k, strconv.Itoa(def)))
		if err != nil || v < 0 {
			errs = append(errs, fmt.Errorf("%s: want a non-negative integer", k))
		}
		return v
	}
	dur := func(k string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(env(k, def.String()))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("%s: want a positive duration", k))
		}
		return v
	}
	root := env("BENCH_ROOT", "")
	if len(args) > 0 {
		root = args[0]
	}
	if root == "" {
		wd, _ := os.Getwd()
		root = filepath.Dir(wd) // run from bench/
	}
	root, _ = filepath.Abs(root)
	c := config{
		Root:        root,
		Out:         filepath.Join(root, "bench", "out"),
		AdminURL:    env("BENCH_PG_URL", env("MARKETDATA_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable")),
		RedisURL:    env("BENCH_REDIS_URL", benchRedisURL(env("MARKETDATA_REDIS_URL", "redis://127.0.0.1:56379/0"))),
		PGLog:       env("BENCH_PG_LOG", ""),
		Duration:    dur("BENCH_DURATION", 10*time.Second),
		Warmup:      dur("BENCH_WARMUP", 3*time.Second),
		Connections: num("BENCH_CONNECTIONS", 16),
		Threads:     num("BENCH_THREADS", 2),
		Symbols:     num("BENCH_SYMBOLS", 1600),
		Years:       num("BENCH_YEARS", 25),
		Seed:        num("BENCH_SEED", 42),
		Notes:       num("BENCH_NOTES", 100_000),
		Accounts:    num("BENCH_ACCOUNTS", 100),
		ImportRows:  num("BENCH_IMPORT_ROWS", 1_000_000),
		Fresh:       env("BENCH_FRESH", "0") == "1",
		MDRate:      num("BENCH_MD_RATE", 100_000),
		MDQuota:     int64(num("BENCH_MD_QUOTA", 2_000_000_000)),
		ProfileSecs: num("BENCH_PROFILE_SECONDS", 6),
		Rounds:      max(num("BENCH_ROUNDS", 9), 1),
		Slices:      max(num("BENCH_SLICES", 30), 1),
		Cores:       runtime.NumCPU(),
		// BENCH_PORT_OFFSET moves every listener, for a machine where
		// something else holds the default ports.
		Ports: ports{Notes: 18080, Marketdata: 18081, Ceiling: 18090, Minimal: 18091, NotesPprof: 18180, MarketdataPprof: 18181}.
			offset(num("BENCH_PORT_OFFSET", 0)),
		TenantNotes: num("BENCH_TENANT_NOTES", 200),
		TenantSmall: num("BENCH_TENANT_SMALL", 100),
		TenantLarge: num("BENCH_TENANT_LARGE", 5000),

		IntradaySymbols:       num("BENCH_INTRADAY_SYMBOLS", 500),
		IntradayDays:          num("BENCH_INTRADAY_DAYS", 257),
		IntradayImportSymbols: num("BENCH_INTRADAY_IMPORT_SYMBOLS", 10),
		IntradayLoadJobs:      num("BENCH_INTRADAY_LOAD_JOBS", runtime.NumCPU()),

		Scale: env("BENCH_SCALE", ""),
		// Two connections: the scale targets are latencies of one request,
		// and at 16 connections on 2 cores a p50 is mostly the queue
		// (connections over throughput), the same at every size.
		ScaleConnections: num("BENCH_SCALE_CONNECTIONS", 2),
		ScaleRounds:      max(num("BENCH_SCALE_ROUNDS", 3), 1),
	}
	if c.Scale == "both" {
		c.Scale = ""
	}
	if c.Scale != "" && c.Scale != "small" {
		errs = append(errs, fmt.Errorf("BENCH_SCALE: want small or both"))
	}
	if c.ScaleConnections < 1 {
		errs = append(errs, fmt.Errorf("BENCH_SCALE_CONNECTIONS: want at least 1"))
	}
	if v := strings.TrimSpace(getenv("BENCH_WORKLOADS")); v != "" {
		c.Only = map[string]bool{}
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				c.Only[id] = true
			}
		}
	}
	if c.TenantSmall < 1 || c.TenantLarge < c.TenantSmall || c.TenantNotes < 1 {
		errs = append(errs, fmt.Errorf("BENCH_TENANT_*: want 1 <= SMALL <= LARGE and NOTES >= 1"))
	}
	if c.IntradayDays < 1 || c.IntradayDays > 257 || c.IntradaySymbols < 1 || c.IntradaySymbols > 9999 || c.IntradayImportSymbols < 1 || c.IntradayImportSymbols > 9999 {
		errs = append(errs, fmt.Errorf("BENCH_INTRADAY_*: want DAYS 1..257 (weekdays of 2025 from 6 January) and SYMBOLS, IMPORT_SYMBOLS 1..9999"))
	}
	if v := getenv("BENCH_QUIET_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("BENCH_QUIET_WAIT: want a duration"))
		}
		c.QuietWait = d
	}
	if c.Accounts < 1 || c.Accounts > 120 {
		errs = append(errs, fmt.Errorf("BENCH_ACCOUNTS: 1..120 (pgbench runs one script per account)"))
	}
	if c.Connections < c.Threads || c.Threads < 1 {
		errs = append(errs, fmt.Errorf("BENCH_CONNECTIONS must be at least BENCH_THREADS >= 1"))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("config: %v", errs)
	}
	return c, nil
}

// benchRedisURL is logical database 15 of the Redis server of stackURL
// (scripts/stack.sh's MARKETDATA_REDIS_URL), so that a second stack
// (STACK_REDIS_PORT) takes its bench with it; stackURL is returned as it
// is when it does not parse.
func benchRedisURL(stackURL string) string {
	u, err := url.Parse(stackURL)
	if err != nil || u.Host == "" {
		return stackURL
	}
	u.Path = "/15"
	return u.String()
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	// "benchrun report [ROOT]" re-renders BENCHMARKS.md from
	// bench/results.json, e.g. after editing bench/analysis.md.
	if len(args) > 0 && args[0] == "report" {
		cfg, err := loadConfig(args[1:], getenv)
		if err != nil {
			return err
		}
		return rerender(cfg.Root, stdout)
	}
	cfg, err := loadConfig(args, getenv)
	if err != nil {
		return err
	}
	for _, d := range []string{cfg.Out, filepath.Join(cfg.Out, "pgbench"), filepath.Join(cfg.Out, "logs"), filepath.Join(cfg.Out, "profiles")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	b := &bench{cfg: cfg, r: &runner{log: stdout}, out: stdout, started: time.Now()}
	// Reports are read on other machines: every path in a recorded command
	// or output is shown relative to the repository root.
	b.r.addReplacement(cfg.Root+string(filepath.Separator), "")
	b.db = pg{r: b.r, adminURL: cfg.AdminURL}
	defer b.stopAll()
	return b.run(ctx)
}
