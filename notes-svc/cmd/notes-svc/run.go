package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
)

const usage = `usage: notes-svc [command]

commands:
  serve                         serve the API (the default)
  migrate                       apply pending database migrations
  keys create --account NAME    issue an API key; the key is the last line of output
         [--scopes notes:read,notes:write] [--expires-in DURATION]
  keys list [--account NAME]    list keys (never their secrets)
  keys revoke KEY_ID            revoke a key
  healthcheck                   exit 0 when the server on NOTES_HTTP_ADDR is ready
  version, --version            print the version

configuration comes from NOTES_* environment variables (see README.md)`

// run is the whole program; main only adds signals and the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "notes-svc", version)
		return nil
	case "help", "--help", "-h", "-help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	switch cmd {
	case "serve":
		if len(args) > 0 {
			return fmt.Errorf("serve takes no arguments\n%s", usage)
		}
		if getenv("GOGC") == "" {
			// The live heap of a serving process is a few MB: at the default
			// 100% the collector runs every few thousand requests and costs
			// about a tenth of the CPU under load (bench/analysis.md).
			debug.SetGCPercent(cfg.GCPercent)
		}
		return serve(ctx, cfg, stdout)
	case "migrate":
		if len(args) > 0 {
			return fmt.Errorf("migrate takes no arguments\n%s", usage)
		}
		return migrate(ctx, cfg, stdout)
	case "keys":
		return keys(ctx, cfg, args, stdout)
	case "healthcheck":
		return healthcheck.Check(ctx, cfg.HTTPAddr, stdout)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func newLogger(cfg config.Config, stdout io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

func openDB(cfg config.Config) (*sql.DB, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	return notesdb.Open(cfg.DatabaseURL, notesdb.PoolOptions{
		MaxOpenConns:     cfg.DBMaxOpenConns,
		MaxIdleConns:     cfg.DBMaxIdleConns,
		ConnMaxLifetime:  cfg.DBConnMaxLifetime,
		ConnMaxIdleTime:  cfg.DBConnMaxIdleTime,
		StatementTimeout: cfg.DBStatementTimeout,
	})
}

func migrate(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	log := newLogger(cfg, stdout)
	db, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	// Migrations may rewrite big tables: no statement timeout here, and a
	// lock timeout instead, so one stuck behind a lock fails clearly.
	if _, err := db.ExecContext(ctx, "SET statement_timeout = 0; SET lock_timeout = '60s'"); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	db.SetMaxOpenConns(1)
	return notesdb.Migrate(ctx, db, log)
}

func serve(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	log := newLogger(cfg, stdout)
	log.Info("starting notes-svc", "version", version, "config", cfg)
	db, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := notesdb.New(db)
	if err != nil {
		return err
	}
	store.SetListBatch(notesdb.ListBatch{Rows: cfg.ListBatchSize})
	listings := notes.NewListLimiter(cfg.ListMaxPerAccount, cfg.ListMaxConcurrent, cfg.ListWait)

	// Background work ends with bg, after the HTTP server has drained.
	bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	tracker := auth.NewLastUsedTracker(store.FlushLastUsed)
	trackerDone := make(chan struct{})
	go func() {
		defer close(trackerDone)
		tracker.Run(bg, cfg.LastUsedFlushInterval, func(err error) { log.Warn("flush last_used_at", "error", err.Error()) })
	}()
	janitorDone := make(chan struct{})
	go func() {
		defer close(janitorDone)
		expireIdempotencyKeys(bg, store, log)
	}()

	authn := auth.NewAuthenticator(auth.Options{
		Prefix: auth.NotesPrefix, Store: store, CacheTTL: auth.CacheTTLFromSetting(cfg.KeyCacheTTL), CacheSize: cfg.KeyCacheSize, OnVerified: tracker.Record,
		Throttle: auth.NewFailureThrottle(cfg.AuthFailureLimit, cfg.AuthFailureWindow, 100_000, nil),
	})
	gin.SetMode(gin.ReleaseMode)
	api, err := httpapi.NewServer(httpapi.Options{
		Notes: notes.NewService(store, nil).WithListLimiter(listings), Auth: authn, Ping: store.Ping, DB: db, Log: log,
		RequestTimeout: cfg.RequestTimeout, TrustedProxies: cfg.TrustedProxies, Version: version,
	})
	if err != nil {
		return err
	}
	registerListingMetrics(api.Registry(), listings)
	srv := &http.Server{
		Addr:              cfg.HTTPAddr,
		Handler:           api,
		ReadTimeout:       cfg.HTTPReadTimeout,
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    cfg.HTTPMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var pprofSrv *http.Server
	if cfg.PprofAddr != "" {
		pprofSrv = startPprof(cfg.PprofAddr, log)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String())

	select {
	case err := <-serveErr:
		stopBackground()
		<-trackerDone
		<-janitorDone
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Readiness fails first so that load balancers stop routing here, then
	// in-flight requests finish, then the process exits.
	api.SetShuttingDown()
	log.Info("shutting down", "drain", cfg.ShutdownDrain.String())
	if cfg.ShutdownDrain > 0 {
		time.Sleep(cfg.ShutdownDrain)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if pprofSrv != nil {
		_ = pprofSrv.Shutdown(shutdownCtx)
	}
	stopBackground()
	<-trackerDone // the tracker flushes what it still holds
	<-janitorDone
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// registerListingMetrics exports the listing limiter's slots in use and
// its refusals by cause.
func registerListingMetrics(reg prometheus.Registerer, l *notes.ListLimiter) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "notes_listings_in_progress",
			Help: "Unpaged listings holding a slot of the listing limiter."}, func() float64 { return float64(l.InProgress()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "notes_listings_refused_total", ConstLabels: prometheus.Labels{"reason": "account"},
			Help: "Unpaged listings refused: 429 over the account's bound, 503 when no process slot came free."},
			func() float64 { a, _ := l.Refused(); return float64(a) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "notes_listings_refused_total", ConstLabels: prometheus.Labels{"reason": "busy"},
			Help: "Unpaged listings refused: 429 over the account's bound, 503 when no process slot came free."},
			func() float64 { _, b := l.Refused(); return float64(b) }),
	)
}

// expireIdempotencyKeys deletes expired Idempotency-Key records hourly, in
// small batches so that no run holds locks for long.
func expireIdempotencyKeys(ctx context.Context, store *notesdb.Store, log *slog.Logger) {
	ticker := time.NewTicker(time.Hour)
	defer ticker.Stop()
	for {
		for {
			n, err := store.DeleteExpiredIdempotencyKeys(ctx, time.Now(), 1000)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("expire idempotency keys", "error", err.Error())
				}
				break
			}
			if n < 1000 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func startPprof(addr string, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof server", "error", err.Error())
		}
	}()
	log.Info("pprof listening", "addr", addr)
	return srv
}

func keys(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys needs a subcommand: create, list or revoke\n%s", usage)
	}
	sub, args := args[0], args[1:]
	db, err := openDB(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := notesdb.New(db)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		account := fs.String("account", "", "account name (created if new)")
		scopes := fs.String("scopes", strings.Join(notesdb.DefaultScopes, ","), "comma-separated scopes")
		expiresIn := fs.Duration("expires-in", 0, "lifetime of the key; 0 never expires")
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("keys create: %w\n%s", err, usage)
		}
		if *account == "" || fs.NArg() > 0 {
			return fmt.Errorf("keys create: --account NAME is required and nothing else\n%s", usage)
		}
		var scopeList []string
		for s := range strings.SplitSeq(*scopes, ",") {
			s = strings.TrimSpace(s)
			if s != notesdb.ScopeRead && s != notesdb.ScopeWrite {
				return fmt.Errorf("keys create: unknown scope %q (want %s or %s)", s, notesdb.ScopeRead, notesdb.ScopeWrite)
			}
			scopeList = append(scopeList, s)
		}
		var expiresAt time.Time
		if *expiresIn < 0 {
			return errors.New("keys create: --expires-in must not be negative")
		}
		if *expiresIn > 0 {
			expiresAt = time.Now().Add(*expiresIn)
		}
		k, plain, err := store.CreateKey(ctx, *account, scopeList, expiresAt)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "account: %s (%s)\nkey id: %s\nscopes: %s\n", *account, k.AccountID, k.ID, strings.Join(k.Scopes, ","))
		if k.ExpiresAt != nil {
			fmt.Fprintf(stdout, "expires: %s\n", k.ExpiresAt.Format(time.RFC3339))
		}
		fmt.Fprintln(stdout, "The key is shown once, on the next line. Store it now.")
		fmt.Fprintln(stdout, plain)
		return nil
	case "list":
		fs := flag.NewFlagSet("keys list", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		account := fs.String("account", "", "only this account")
		if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
			return fmt.Errorf("keys list: bad arguments\n%s", usage)
		}
		list, err := store.ListKeys(ctx, *account)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY ID\tACCOUNT\tHINT\tSCOPES\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
		for _, k := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountName, k.Hint, strings.Join(k.Scopes, ","),
				k.CreatedAt.UTC().Format(time.RFC3339), when(k.ExpiresAt), when(k.RevokedAt), when(k.LastUsedAt))
		}
		return tw.Flush()
	case "revoke":
		if len(args) != 1 {
			return fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", usage)
		}
		if err := store.RevokeKey(ctx, args[0], time.Now()); err != nil {
			return fmt.Errorf("keys revoke %s: %w", args[0], err)
		}
		fmt.Fprintf(stdout, "revoked %s; replicas that cached it stop accepting it within NOTES_KEY_CACHE_TTL (%s)\n", args[0], cfg.KeyCacheTTL)
		return nil
	}
	return fmt.Errorf("unknown keys subcommand %q\n%s", sub, usage)
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
