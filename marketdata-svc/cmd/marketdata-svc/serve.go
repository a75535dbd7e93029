package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/cache"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/replicas"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/httpserve"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// serve runs the HTTP API until ctx ends, then shuts down gracefully:
// readiness fails first, the server keeps serving for cfg.ShutdownDrain so
// load balancers move away, then in-flight requests get up to
// cfg.ShutdownTimeout to finish.
// serve runs the API until ctx ends. access writes the access log into
// log's stream.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, access *accesslog.Log, args []string) error {
	if err := parseServeArgs(args); err != nil {
		return err
	}
	gin.SetMode(gin.ReleaseMode)
	log.Info("starting marketdata-svc", "version", version, "config", cfg)

	// Off unless OTEL_TRACES_EXPORTER names an exporter: then nothing
	// below is traced and no tracer is installed (pkg/tracing).
	tr, err := tracing.New(ctx, cfg.Tracing, tracing.Options{Service: "marketdata-svc", Version: version})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() {
		if err := tr.Shutdown(ctx); err != nil {
			log.Warn("tracing shutdown", "err", err)
		}
	}()
	store, err := marketdatadb.OpenTraced(ctx, cfg, tr.PgxTracer())
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer store.Close()
	reg := newRegistry(store)
	// With replicas, the API's reads go through them; they must have
	// replayed the data version the cache keys on (versions, set below
	// before anything reads), which every version a read was answered at
	// raises.
	primary := primaryNode(store)
	var dbReads reads.Reader = primary.Reads
	var versions *dataversion.Source
	var router *replicas.Router
	if len(cfg.DatabaseReplicaURLs) > 0 {
		router, err = replicas.Open(cfg, primary, tr.PgxTracer(), replicas.Options{
			Logger: log, ReadTimeout: cfg.ReplicaReadTimeout,
			Version: func() (int64, bool) { return versions.Current() },
			Observe: func(v int64) { versions.Observe(v) },
		})
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer router.Close()
		registerReplicaMetrics(reg, router)
		dbReads = router
	}
	// A read that a failover cut off runs once more (reads.Retry), above
	// the router, whose replica reads fall back to the primary already.
	deps, err := newServeDeps(ctx, cfg, log, reg, store, reads.NewRetry(dbReads), tr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer deps.close()
	versions = deps.versions
	if router != nil {
		deps.replicaStates = router.States
	}

	// Read once before serving, so the first requests can use the cache.
	if err := deps.versions.Refresh(ctx); err != nil {
		log.Warn("data version unknown at start: the cache is bypassed until it is read", "err", err)
	}
	defer runInBackground(ctx, deps.versions.Run)()
	if router != nil {
		router.Check(ctx)
		defer runInBackground(ctx, router.Run)()
	}
	if deps.limiterRun != nil {
		// Stopped after the server: the last requests spend their tokens,
		// then the unspent ones go back to Redis.
		defer runInBackground(ctx, deps.limiterRun)()
	}
	// last_used_at is flushed in batches, never written per request.
	tracker := auth.NewLastUsedTracker(store.FlushLastUsed)
	defer runInBackground(ctx, func(ctx context.Context) {
		tracker.Run(ctx, 30*time.Second, func(err error) { log.Warn("flush key last-used times", "err", err) })
	})()

	authn := auth.NewAuthenticator(auth.Options{
		Prefix: auth.MarketDataPrefix, Store: store, CacheTTL: auth.CacheTTLFromSetting(cfg.KeyCacheTTL), OnVerified: tracker.Record,
		Throttle: auth.NewFailureThrottle(cfg.AuthFailureLimit, cfg.AuthFailureWindow, 100_000, nil),
	})
	api, err := newAPI(cfg, log, access, reg, store, deps, authn)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	bg, stopAdmin := context.WithCancel(context.WithoutCancel(ctx))
	admin, adminDone, err := startAdmin(bg, cfg, store, authn, deps.rdb, reg, log)
	defer func() { stopAdmin(); <-adminDone }()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return httpserve.Run(ctx, httpserve.Options{
		Addr: cfg.HTTPAddr, Server: newHTTPServer(cfg, log, api), PprofAddr: cfg.PprofAddr, AdminAddr: cfg.AdminAddr, Admin: admin,
		ShuttingDown: api.SetShuttingDown, Drain: cfg.ShutdownDrain, ShutdownTimeout: cfg.ShutdownTimeout, Log: log,
	})
}

// parseServeArgs checks that serve was given no flag or argument of its
// own: it is configured by the environment alone.
func parseServeArgs(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// newRegistry is the /metrics registry with the process's and the
// database pool's collectors, and the sync command's last successes.
func newRegistry(store *marketdatadb.Store) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(store.DB(), "marketdata"),
		newSyncCollector(ingest.New(store.DB())),
	)
	return reg
}

// primaryNode is the primary as the replica router reads it: the database
// and the API's reads on its pool.
func primaryNode(store *marketdatadb.Store) replicas.Node {
	return replicas.Node{Database: store, Reads: reads.New(store.DB())}
}

// registerReplicaMetrics exports where reads go and each replica pool's
// sql.DBStats (db_name marketdata_replica_1, ...).
func registerReplicaMetrics(reg *prometheus.Registry, router *replicas.Router) {
	for i, db := range router.Pools() {
		reg.MustRegister(collectors.NewDBStatsCollector(db, fmt.Sprintf("marketdata_replica_%d", i+1)))
	}
	for target, count := range map[string]func(replicas.Stats) int64{
		"replica":  func(s replicas.Stats) int64 { return s.ReplicaReads },
		"primary":  func(s replicas.Stats) int64 { return s.PrimaryReads },
		"fallback": func(s replicas.Stats) int64 { return s.Fallbacks },
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "marketdata_db_replica_reads_total", ConstLabels: prometheus.Labels{"target": target},
			Help: "Store reads by where they went: a replica, the primary (no replica usable), or the primary after failing on a replica (fallback).",
		}, func() float64 { return float64(count(router.Stats())) }))
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "marketdata_db_replicas_usable",
		Help: "Replicas that answer their health check and have replayed the data version in force.",
	}, func() float64 { return float64(router.Stats().Usable) }))
}

// serveDeps are what the API shares state through: in Redis when the
// service has one, else in process.
type serveDeps struct {
	versions *dataversion.Source
	cache    *cache.Store
	limiter  httpapi.Limiter
	// limiterRun is the limiter's background work, if it has any.
	limiterRun func(context.Context)
	close      func()
	tracing    *tracing.Tracing
	// rdb is the Redis client when the service has one, else nil.
	rdb redis.UniversalClient
	// replicaStates reports the read replicas for /readyz; nil without.
	replicaStates func() []string
}

// newServeDeps builds the data version source, the cache and the limiter,
// on Redis when cfg names one.
// dbReads is what the cache reads through: the primary's reads, or the
// replica router over them.
func newServeDeps(ctx context.Context, cfg config.Config, log *slog.Logger, reg prometheus.Registerer, store *marketdatadb.Store, dbReads marketdata.Store, tr *tracing.Tracing) (serveDeps, error) {
	// The changes of each import are read on the primary, which every
	// version the instance sees has reached.
	cacheOpts := cache.Options{TTL: cfg.CacheTTL, Timeout: cfg.CacheTimeout, QueryTimeout: cfg.RequestTimeout,
		Changes: store, Logger: log, Registry: reg}
	versionOpts := dataversion.Options{PollInterval: cfg.DataVersionPoll, Logger: log}
	if !cfg.RedisConfigured() {
		versions := dataversion.NewDatabase(store.DataVersion, versionOpts)
		d := serveDeps{
			versions: versions,
			cache:    cache.NewLocal(dbReads, versions, cfg.LocalCacheSize, cacheOpts),
			limiter:  ratelimit.NewLocal(reg, nil),
			close:    func() {},
			tracing:  tr,
		}
		log.Info("no redis configured: rate limits and quotas are per process and reset on restart")
		return d, nil
	}
	// go-redis offers only a process-wide logger.
	redis.SetLogger(cache.RedisLogger{Log: log})
	rdb, err := cache.NewUniversalClient(redisConn(cfg), cfg.CacheTimeout)
	if err != nil {
		return serveDeps{}, err
	}
	if tr.Enabled() {
		if err := cache.TraceRedis(rdb, tr.TracerProvider()); err != nil {
			return serveDeps{}, err
		}
	}
	versions := dataversion.NewRedis(rdb, store.DataVersion, versionOpts)
	d := serveDeps{
		versions: versions,
		cache:    cache.NewRedis(dbReads, rdb, versions, cacheOpts).WithMaxEntryBytes(cfg.CacheMaxEntryBytes),
		close:    func() { _ = rdb.Close() },
		tracing:  tr,
		rdb:      rdb,
	}
	// The monthly usage counters are copied to the database, which
	// restores them when Redis loses them.
	usage := ratelimit.NewUsageSync(rdb, store, ratelimit.UsageSyncOptions{Interval: cfg.UsageSyncInterval, Logger: log})
	d.limiterRun = usage.Run
	if cfg.RateLimitMode == config.RateLimitExact {
		d.limiter = ratelimit.NewRedis(rdb, ratelimit.RedisOptions{Timeout: cfg.CacheTimeout, Logger: log, Registry: reg, Usage: usage})
	} else {
		leased := ratelimit.NewLeased(rdb, ratelimit.LeasedOptions{Timeout: cfg.CacheTimeout, Logger: log, Registry: reg, Usage: usage})
		d.limiter = leased
		d.limiterRun = func(ctx context.Context) {
			uctx, stopUsage := context.WithCancel(context.WithoutCancel(ctx))
			copied := make(chan struct{})
			go func() { defer close(copied); usage.Run(uctx) }()
			leased.Run(ctx)
			stopUsage() // the last copy follows the last give-back
			<-copied
		}
	}
	// Redis being down at start is no reason not to serve: the cache and
	// the limiter degrade and resume by themselves.
	log.Info("redis cache and rate limits", "status", d.cache.Status(ctx), "ratelimit_mode", cfg.RateLimitMode)
	checkEvictionPolicy(ctx, rdb, log)
	return d, nil
}

// redisConn is the Redis that cfg names, in whichever mode.
func redisConn(cfg config.Config) cache.RedisConn {
	return cache.RedisConn{URL: cfg.RedisURL, SentinelAddrs: cfg.RedisSentinelAddrs, SentinelMaster: cfg.RedisSentinelMaster,
		SentinelPassword: cfg.RedisSentinelPassword, ClusterAddrs: cfg.RedisClusterAddrs, Password: cfg.RedisPassword}
}

// runInBackground runs fn until the returned stop is called, which waits
// for fn to return. fn's context ends with stop alone, not with ctx: the
// work must outlive the shutdown of the requests that use it.
func runInBackground(ctx context.Context, fn func(context.Context)) (stop func()) {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(bctx)
	}()
	return func() { cancel(); <-done }
}

// newAPI builds the HTTP API on the store and the shared state.
func newAPI(cfg config.Config, log *slog.Logger, access *accesslog.Log, reg *prometheus.Registry, store *marketdatadb.Store, deps serveDeps, authn *auth.Authenticator) (*httpapi.Server, error) {
	return httpapi.NewServer(httpapi.Options{
		Store:          deps.cache,
		EODPages:       deps.cache,
		Auth:           authn,
		Limiter:        deps.limiter,
		Ping:           store.Ping,
		CacheStatus:    deps.cache.Status,
		ReplicaStates:  deps.replicaStates,
		Logger:         log,
		AccessLog:      access,
		Registry:       reg,
		TrustedProxies: cfg.TrustedProxies,
		CORSOrigins:    cfg.CORSOrigins,
		RequestTimeout: cfg.RequestTimeout,
		Trace:          deps.tracing.Middleware(),
	})
}

// newHTTPServer is the public server of api.
func newHTTPServer(cfg config.Config, log *slog.Logger, api http.Handler) *http.Server {
	return &http.Server{
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
}

// checkEvictionPolicy warns when Redis could evict limiter state: only the
// volatile policies spare the usage counters, which carry no expiry (see
// deploy/README.md); and when Redis has no maxmemory, so that only the
// entries' TTL and size cap bound what the cache puts there. Managed Redis
// that refuses CONFIG is left alone.
func checkEvictionPolicy(ctx context.Context, rdb redis.UniversalClient, log *slog.Logger) {
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
	if res, err := rdb.ConfigGet(cctx, "maxmemory").Result(); err == nil && res["maxmemory"] == "0" {
		log.Error("redis has no maxmemory: set one with maxmemory-policy volatile-lru, or the cache's memory is bounded only by request rate × MARKETDATA_CACHE_TTL × MARKETDATA_CACHE_MAX_ENTRY_BYTES")
	}
}
