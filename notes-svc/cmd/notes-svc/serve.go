package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/delivery"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhookdb"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/flushwriter"
	"github.com/tickerdesk/tickerdesk/pkg/httpserve"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// serveCommand is `notes-svc serve`, the default command.
func serveCommand(ctx context.Context, cfg config.Config, args []string, getenv func(string) string, stdout io.Writer) error {
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
}

func serve(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	// Log lines leave in batches, not a write per request; errors at once
	// (pkg/flushwriter). The deferred Close writes out the rest last.
	out := flushwriter.New(stdout, flushwriter.Options{})
	defer out.Close()
	log := slog.New(out.Handler(newLogger(cfg, out).Handler()))
	log.Info("starting notes-svc", "version", version, "config", cfg)
	// Off unless OTEL_TRACES_EXPORTER names an exporter: then nothing
	// below is traced and no tracer is installed (pkg/tracing).
	tr, err := tracing.New(ctx, cfg.Tracing, tracing.Options{Service: "notes-svc", Version: version, Private: httpapi.PrivateParams()})
	if err != nil {
		return err
	}
	defer func() {
		if err := tr.Shutdown(ctx); err != nil {
			log.Warn("tracing shutdown", "error", err.Error())
		}
	}()
	store, db, err := openStore(cfg, tr.PgxTracer())
	if err != nil {
		return err
	}
	defer db.Close()
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
	// Each instance counts its own requests: notes-svc has no shared store.
	var rateLimit *keyrate.Limiter
	if cfg.RateLimitPerSecond > 0 {
		rateLimit = keyrate.NewLimiter(cfg.RateLimitPerSecond, nil)
	}
	hooks, queue, err := newWebhooks(cfg, db.DB, store, log)
	if err != nil {
		return err
	}
	// The queue's workers start when the database answers, and stop
	// after the HTTP server has drained, letting attempts in flight end.
	queueCtx, stopStarting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStarting()
	queueStarted := make(chan struct{})
	go func() {
		defer close(queueStarted)
		queue.StartWhenReady(queueCtx)
	}()

	gin.SetMode(gin.ReleaseMode)
	api, err := httpapi.NewServer(httpapi.Options{
		Notes: notes.NewService(store, nil).WithListLimiter(listings).WithEventRetention(cfg.EventRetention), Auth: authn, Ping: primaryCheck(db.DB), DBStats: postgres.NewPoolCollector(db.PGX, "notes"), Log: log, AccessLog: accesslog.New(out, cfg.LogLevel),
		RequestTimeout: cfg.RequestTimeout, TrustedProxies: cfg.TrustedProxies, Version: version, Trace: tr.Middleware(), RateLimit: rateLimit,
		Webhooks: hooks,
	})
	if err != nil {
		return err
	}
	registerListingMetrics(api.Registry(), listings)
	admin, auditDone, err := startAdmin(bg, cfg, store, authn, api.Registry(), log)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api,
		ReadTimeout:       cfg.HTTPReadTimeout,
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    cfg.HTTPMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// Readiness fails first so that load balancers stop routing here, then
	// in-flight requests finish; background work ends last, so the
	// tracker flushes what it still holds.
	err = httpserve.Run(ctx, httpserve.Options{
		Addr: cfg.HTTPAddr, Server: srv, PprofAddr: cfg.PprofAddr, AdminAddr: cfg.AdminAddr, Admin: admin,
		ShuttingDown: api.SetShuttingDown, Drain: cfg.ShutdownDrain, ShutdownTimeout: cfg.ShutdownTimeout, Log: log,
	})
	stopStarting()
	<-queueStarted
	stopCtx, cancelStop := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	if err := queue.Stop(stopCtx); err != nil {
		log.Warn("stop webhook queue", "error", err.Error())
	}
	cancelStop()
	stopBackground()
	<-trackerDone
	<-janitorDone
	<-auditDone
	return err
}

// newWebhooks wires the webhooks: their store, the egress guard, the
// River queue that delivers them and the service the API calls.
func newWebhooks(cfg config.Config, db *sql.DB, notesStore *notesdb.Store, log *slog.Logger) (*webhook.Service, *delivery.Queue, error) {
	cipher, err := webhook.ParseKey(cfg.WebhookSecretKey)
	if err != nil {
		return nil, nil, err
	}
	if cipher == nil {
		log.Warn("NOTES_WEBHOOK_SECRET_KEY is not set: webhook endpoint secrets are stored unsealed")
	}
	if cfg.WebhookAllowPrivate {
		log.Warn("NOTES_WEBHOOK_ALLOW_PRIVATE is on: webhooks may use http and reach private addresses; for development only")
	}
	store, err := webhookdb.New(db)
	if err != nil {
		return nil, nil, err
	}
	guard := &egress.Guard{AllowPrivate: cfg.WebhookAllowPrivate}
	queue, err := delivery.New(delivery.Options{
		DB: db, Store: store, Cipher: cipher, Guard: guard, EventLog: notesStore,
		Workers: cfg.WebhookWorkers, PerEndpoint: cfg.WebhookPerEndpoint, RetryBase: cfg.WebhookRetryBase, UserAgent: "Tickerdesk-Webhooks/" + version, Log: log,
		Maintenance: notesStore, TrashRetention: cfg.TrashRetention, EventRetention: cfg.EventRetention,
	})
	if err != nil {
		return nil, nil, err
	}
	hooks, err := webhook.NewService(webhook.Options{Store: store, Cipher: cipher, URLs: guard, Redeliverer: queue})
	if err != nil {
		return nil, nil, err
	}
	return hooks, queue, nil
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

// primaryCheck is /readyz's database check: the pool must reach a primary.
// A ping alone passes on a demoted node, which refuses every write.
func primaryCheck(db *sql.DB) func(context.Context) error {
	return func(ctx context.Context) error { return postgres.CheckPrimary(ctx, db) }
}
