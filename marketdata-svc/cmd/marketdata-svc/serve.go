package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/cache"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// serve runs the HTTP API until ctx ends, then shuts down gracefully:
// readiness fails first, the server keeps serving for cfg.ShutdownDrain so
// load balancers move away, then in-flight requests get up to
// cfg.ShutdownTimeout to finish.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	gin.SetMode(gin.ReleaseMode)
	log.Info("starting marketdata-svc", "version", version, "config", cfg)

	store, err := marketdatadb.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer store.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(store.DB(), "marketdata"),
	)

	cacheOpts := cache.Options{TTL: cfg.CacheTTL, Timeout: cfg.CacheTimeout, QueryTimeout: cfg.RequestTimeout, Logger: log, Registry: reg}
	versionOpts := dataversion.Options{PollInterval: cfg.DataVersionPoll, Logger: log}
	var versions *dataversion.Source
	var cached *cache.Store
	var limiter httpapi.Limiter
	if cfg.RedisURL != "" {
		// go-redis offers only a process-wide logger.
		redis.SetLogger(cache.RedisLogger{Log: log})
		rdb, err := cache.NewRedisClient(cfg.RedisURL, cfg.CacheTimeout)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer rdb.Close()
		versions = dataversion.NewRedis(rdb, store.DataVersion, versionOpts)
		cached = cache.NewRedis(store, rdb, versions, cacheOpts)
		limiter = ratelimit.NewRedis(rdb, ratelimit.RedisOptions{Timeout: cfg.CacheTimeout, Logger: log, Registry: reg})
		// Redis being down at start is no reason not to serve: the cache
		// and the limiter degrade and resume by themselves.
		log.Info("redis cache and rate limits", "status", cached.Status(ctx))
		checkEvictionPolicy(ctx, rdb, log)
	} else {
		versions = dataversion.NewDatabase(store.DataVersion, versionOpts)
		cached = cache.NewLocal(store, versions, cfg.LocalCacheSize, cacheOpts)
		limiter = ratelimit.NewLocal(reg, nil)
		log.Info("no redis configured: rate limits and quotas are per process and reset on restart")
	}

	// Read once before serving, so the first requests can use the cache.
	if err := versions.Refresh(ctx); err != nil {
		log.Warn("data version unknown at start: the cache is bypassed until it is read", "err", err)
	}
	versionsCtx, stopVersions := context.WithCancel(context.WithoutCancel(ctx))
	versionsDone := make(chan struct{})
	go func() { defer close(versionsDone); versions.Run(versionsCtx) }()
	defer func() { stopVersions(); <-versionsDone }()

	// last_used_at is flushed in batches, never written per request.
	tracker := auth.NewLastUsedTracker(store.TouchKeys)
	trackerCtx, stopTracker := context.WithCancel(context.WithoutCancel(ctx))
	trackerDone := make(chan struct{})
	go func() {
		defer close(trackerDone)
		tracker.Run(trackerCtx, 30*time.Second, func(err error) { log.Warn("flush key last-used times", "err", err) })
	}()
	defer func() { stopTracker(); <-trackerDone }()

	api, err := httpapi.NewServer(httpapi.Options{
		Store:    cached,
		EODPages: cached,
		Auth: auth.NewAuthenticator(auth.Options{
			Prefix: auth.MarketDataPrefix, Store: store, CacheTTL: auth.CacheTTLFromSetting(cfg.KeyCacheTTL), OnVerified: tracker.Record,
			Throttle: auth.NewFailureThrottle(cfg.AuthFailureLimit, cfg.AuthFailureWindow, 100_000, nil),
		}),
		Limiter:        limiter,
		Ping:           store.Ping,
		CacheStatus:    cached.Status,
		Logger:         log,
		Registry:       reg,
		TrustedProxies: cfg.TrustedProxies,
		CORSOrigins:    cfg.CORSOrigins,
		RequestTimeout: cfg.RequestTimeout,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// Past the request timeout the handler answers 503 itself; the
		// write timeout only ends connections whose client stopped reading.
		WriteTimeout:   cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 128 << 10, // room for a 64 KiB query string
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String())

	var debug *http.Server
	if cfg.PprofAddr != "" {
		debug, err = startPprof(cfg.PprofAddr, log, errs)
		if err != nil {
			_ = srv.Close()
			return fmt.Errorf("serve: %w", err)
		}
	}

	select {
	case err := <-errs:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	api.SetShuttingDown()
	log.Info("shutting down: readiness now fails", "drain", cfg.ShutdownDrain)
	if cfg.ShutdownDrain > 0 {
		time.Sleep(cfg.ShutdownDrain)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if debug != nil {
		_ = debug.Shutdown(shutdownCtx)
	}
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// startPprof serves net/http/pprof on its own listener, never on the
// public one.
func startPprof(addr string, log *slog.Logger, errs chan<- error) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("pprof: %w", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return srv, nil
}

// checkEvictionPolicy warns when Redis could evict limiter state: only the
// volatile policies spare the usage counters, which carry no expiry (see
// deploy/README.md). Managed Redis that refuses CONFIG is left alone.
func checkEvictionPolicy(ctx context.Context, rdb *redis.Client, log *slog.Logger) {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	res, err := rdb.ConfigGet(cctx, "maxmemory-policy").Result()
	if err != nil {
		return
	}
	switch policy := res["maxmemory-policy"]; policy {
	case "volatile-lru", "volatile-lfu", "volatile-ttl", "volatile-random":
	default:
		log.Error("redis maxmemory-policy should be volatile-lru: cache entries expire and make room, quota counters must not be evicted",
			"maxmemory_policy", policy)
	}
}
