// Command faults runs the fault-injection, hostile-input and security
// suites against the real service binaries and writes RELIABILITY.md.
// scripts/faults.sh (make faults) builds everything, starts the suite's own
// PostgreSQL and Redis and calls it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
	"github.com/tickerdesk/tickerdesk/resilience/internal/suite"
)

func main() {
	cmdmain.Run("faults", run)
}

// steps in the order they run; -only selects some by name.
var steps = []string{"hostile", "isolation", "writers", "redis", "slowdb", "postgres", "sigterm", "audit", "audit2", "admin", "webhooks", "failover", "throttle"}

func run(ctx context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	binDir := fs.String("bin", "bin", "directory holding notes-svc and marketdata-svc")
	stackDir := fs.String("stack-dir", ".stack/faults", "the suite's stack directory (scripts/stack.sh STACK_DIR)")
	pgPort := fs.Int("pg-port", 55532, "the suite's PostgreSQL port")
	redisPort := fs.Int("redis-port", 56479, "the suite's Redis port")
	out := fs.String("out", "RELIABILITY.md", "report to write")
	static := fs.String("static", "", "markdown summary of the static checks to include")
	webhookDown := fs.Duration("webhook-down", 20*time.Second, "how long the webhooks step keeps its receiver down (make webhook-drill: 10m)")
	only := fs.String("only", "", "comma-separated steps to run ("+strings.Join(steps, ",")+"); default all")
	if err := fs.Parse(args); err != nil {
		return err
	}
	selected := func(step string) bool {
		return *only == "" || slices.Contains(strings.Split(*only, ","), step)
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stdout, "%s faults: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	rep := report.New()
	start := time.Now()
	stack, err := harness.NewStack(ctx, *stackDir, *pgPort, *redisPort)
	if err != nil {
		return err
	}
	logDir := filepath.Join(*stackDir, "logs")
	_ = os.RemoveAll(logDir)
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return err
	}
	rep.Setup = append(rep.Setup, fmt.Sprintf("Machine: %d CPUs, %s; services built from this commit by `make build`.", runtime.NumCPU(), runtime.Version()),
		fmt.Sprintf("Service settings during the run: request timeout %s, statement timeout %s, shutdown drain %s, shutdown timeout %s, notes HTTP read timeout %s, DB pool %d connections, log level debug.",
			suite.RequestTimeout, suite.StatementTimeout, suite.ShutdownDrain, suite.ShutdownTimeout, suite.HTTPReadTimeout, suite.DBMaxOpenConns))

	rep.Index = suite.AuditRound2Index + "\n" + suite.AuditIndex
	logf("setting up databases, keys and services")
	env, err := suite.Setup(ctx, stack, rep, suite.Config{BinDir: *binDir, LogDir: logDir}, logf)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	defer env.StopAll()

	ensureUp := func() {
		if !stack.RedisUp(ctx) {
			if err := stack.StartRedis(ctx); err != nil {
				rep.Error("restart redis: %v", err)
			}
		}
		if _, err := stack.PSQL(ctx, "postgres", "select 1"); err != nil {
			if err := stack.StartPostgres(ctx); err != nil {
				rep.Error("restart postgres: %v", err)
			}
		}
		if err := env.StartAll(ctx); err != nil {
			rep.Error("restart services: %v", err)
		}
	}
	step := func(name string, f func()) {
		if !selected(name) || ctx.Err() != nil {
			return
		}
		logf("step %s", name)
		t := time.Now()
		f()
		ensureUp()
		logf("step %s done in %s", name, time.Since(t).Round(100*time.Millisecond))
	}

	loadNote, _, err := env.CreateNote(env.NotesKeyA, "load target", env.NoteContent("read under load"), []string{"load"})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	notesGet := func(int) (*http.Request, error) {
		return env.NotesRequest(http.MethodGet, "/v1/notes/"+loadNote.ID, env.NotesKeyA, nil, nil), nil
	}
	notesMix := func(i int) (*http.Request, error) {
		if i%4 == 3 {
			body := fmt.Sprintf(`{"title":"sigterm %d","content":%q}`, i, env.NoteContent("written during shutdown"))
			return env.NotesRequest(http.MethodPost, "/v1/notes", env.NotesKeyA, []byte(body), nil), nil
		}
		return notesGet(i)
	}
	marketMiss := func(i int) (*http.Request, error) {
		return env.MarketRequest(http.MethodGet, fmt.Sprintf("/v1/eod?symbols=GOOG,MSFT&limit=2&offset=%d", 5000+i), env.MarketKey), nil
	}
	// Cache misses, so requests reach the database (locked during SIGTERM).
	marketSig := func(i int) (*http.Request, error) {
		return env.MarketRequest(http.MethodGet, fmt.Sprintf("/v1/eod?symbols=GOOG,MSFT,GSPC.INDX&limit=5&offset=%d", 9000+i), env.MarketKey), nil
	}

	step("hostile", func() {
		suite.Hostile(ctx, env)
		// Hostile inputs include rejected keys; a fresh start keeps them
		// from counting towards the failed-authentication throttle.
		env.StopAll()
	})
	step("isolation", func() {
		suite.TenantIsolation(ctx, env)
		suite.QuotaIsolation(ctx, env)
	})
	step("writers", func() {
		suite.ConcurrentIfMatch(ctx, env)
		suite.ConcurrentIdempotency(ctx, env)
		suite.ConcurrentQuota(ctx, env)
	})
	step("redis", func() { suite.RedisOutage(ctx, env) })
	step("slowdb", func() {
		suite.SlowDatabase(ctx, env, env.Notes, env.NotesDB, "notes", notesGet)
		suite.SlowDatabase(ctx, env, env.Market, env.MarketDB, "eod_bars", marketMiss)
	})
	step("postgres", func() { suite.PostgresRestart(ctx, env, loadNote.ID) })
	step("sigterm", func() {
		suite.Sigterm(ctx, env, env.Notes, env.NotesDB, "notes", notesMix)
		suite.Sigterm(ctx, env, env.Market, env.MarketDB, "eod_bars", marketSig)
	})
	step("audit", func() { suite.Audit(ctx, env) })
	step("audit2", func() { suite.AuditRound2(ctx, env) })
	step("admin", func() { suite.Admin(ctx, env) })
	step("webhooks", func() { suite.Webhooks(ctx, env, *webhookDown) })
	step("failover", func() { suite.Failover(ctx, env) })
	// Last: a throttled address may be refused afterwards.
	step("throttle", func() { suite.AuthThrottle(ctx, env) })

	env.StopAll()
	suite.NoSecretsInLogs(env)
	if *static != "" {
		if b, err := os.ReadFile(*static); err == nil {
			rep.Static = string(b)
		} else {
			rep.Error("static checks summary: %v", err)
		}
	}
	if ctx.Err() != nil {
		rep.Error("interrupted: %v", ctx.Err())
	}
	rep.Elapsed = time.Since(start)
	md := rep.Markdown()
	if old, err := os.ReadFile(*out); err == nil {
		md = strings.TrimRight(md, "\n") + "\n" + report.KeepForeign(string(old))
	}
	if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		return err
	}
	logf("wrote %s in %s", *out, rep.Elapsed.Round(time.Second))
	if !rep.OK() {
		for _, f := range rep.Failures() {
			fmt.Fprintln(stdout, "FAIL:", f)
		}
		return errors.New("expectations failed; see " + *out)
	}
	logf("all expectations held")
	return nil
}
