// Package config reads marketdata-svc's configuration from MARKETDATA_*
// environment variables into one struct, validated once at start-up.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/dsn"
	"github.com/tickerdesk/tickerdesk/pkg/envconfig"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// Config is the whole configuration of marketdata-svc.
type Config struct {
	// DatabaseURL is the PostgreSQL store of record (required).
	DatabaseURL string
	// DatabaseReplicaURLs are PostgreSQL streaming replicas of DatabaseURL
	// that serve the API's reads (marketdatadb.Replicas); none by default.
	DatabaseReplicaURLs []string
	// ReplicaWait bounds how long an import waits for the replicas to
	// replay its commit before it publishes the new data version.
	ReplicaWait time.Duration
	// RedisURL is the cache and rate-limit store; empty selects a bounded
	// in-process cache and in-process limits.
	RedisURL string
	// RedisSentinelAddrs and RedisSentinelMaster select a Sentinel-managed
	// primary instead, RedisClusterAddrs a Redis Cluster (seed nodes); at
	// most one of the three modes is set. RedisPassword authenticates to
	// the data nodes of those two modes (a URL carries its own).
	RedisSentinelAddrs    []string
	RedisSentinelMaster   string
	RedisSentinelPassword string
	RedisClusterAddrs     []string
	RedisPassword         string
	HTTPAddr              string
	// TrustedProxies are the CIDRs or IPs whose X-Forwarded-For is believed;
	// none by default, so a client cannot spoof its address.
	TrustedProxies []string
	// CORSOrigins are the browser origins (scheme://host[:port], or "*" for
	// any) allowed to call the API; none by default, and then no CORS
	// header is sent.
	CORSOrigins []string
	LogLevel    slog.Level
	// ShutdownDrain is how long readiness reports failure before the server
	// stops accepting, so load balancers stop routing first.
	ShutdownDrain   time.Duration
	ShutdownTimeout time.Duration
	RequestTimeout  time.Duration
	// StatementTimeout bounds every SQL statement on the server side.
	StatementTimeout  time.Duration
	DBMaxOpenConns    int
	DBMaxIdleConns    int
	DBConnMaxLifetime time.Duration
	DBConnMaxIdleTime time.Duration
	// CacheTTL is how long an EOD answer stays cached.
	CacheTTL time.Duration
	// CacheTimeout bounds each Redis call; past it the request falls back to
	// the database.
	CacheTimeout   time.Duration
	LocalCacheSize int
	// DataVersionPoll is how often the data version is re-read (from
	// Redis, else the database): the bound on serving an older version
	// after an import when its announcement is lost.
	DataVersionPoll time.Duration
	// RateLimitMode is how limits are checked in Redis: "lease" (tokens
	// leased in batches and spent in process memory, no round trip per
	// request) or "exact" (one Redis script per request).
	RateLimitMode string
	// KeyCacheTTL bounds how long a revoked key may still be accepted.
	KeyCacheTTL time.Duration
	// AuthFailureLimit invalid keys from one client address within
	// AuthFailureWindow block that address until the window ends.
	AuthFailureLimit  int
	AuthFailureWindow time.Duration
	// PprofAddr serves net/http/pprof when set; never the public address.
	PprofAddr string
	// Tracing is what the standard OTEL_* variables say: off unless
	// OTEL_TRACES_EXPORTER names an exporter (pkg/tracing).
	Tracing tracing.Settings
}

// Rate-limit modes (MARKETDATA_RATELIMIT_MODE).
const (
	// RateLimitLease leases tokens from Redis in batches and spends them
	// in process memory (ratelimit.Leased).
	RateLimitLease = "lease"
	// RateLimitExact checks every request in Redis (ratelimit.Redis).
	RateLimitExact = "exact"
)

// Load reads the configuration through getenv.
func Load(getenv func(string) string) (Config, error) {
	r := envconfig.New(getenv, "")
	c := Config{
		DatabaseURL:           r.String("MARKETDATA_DATABASE_URL", ""),
		RedisURL:              r.String("MARKETDATA_REDIS_URL", ""),
		RedisSentinelAddrs:    r.List("MARKETDATA_REDIS_SENTINEL_ADDRS"),
		RedisSentinelMaster:   r.String("MARKETDATA_REDIS_SENTINEL_MASTER", ""),
		RedisSentinelPassword: r.String("MARKETDATA_REDIS_SENTINEL_PASSWORD", ""),
		RedisClusterAddrs:     r.List("MARKETDATA_REDIS_CLUSTER_ADDRS"),
		RedisPassword:         r.String("MARKETDATA_REDIS_PASSWORD", ""),
		HTTPAddr:              r.String("MARKETDATA_HTTP_ADDR", ":8081"),
		TrustedProxies:        r.List("MARKETDATA_TRUSTED_PROXIES"),
		CORSOrigins:           r.List("MARKETDATA_CORS_ORIGINS"),
		LogLevel:              r.Level("MARKETDATA_LOG_LEVEL", slog.LevelInfo),
		ShutdownDrain:         r.Duration("MARKETDATA_SHUTDOWN_DRAIN", 5*time.Second),
		ShutdownTimeout:       r.Duration("MARKETDATA_SHUTDOWN_TIMEOUT", 20*time.Second),
		RequestTimeout:        r.Duration("MARKETDATA_REQUEST_TIMEOUT", 10*time.Second),
		StatementTimeout:      r.Duration("MARKETDATA_STATEMENT_TIMEOUT", 5*time.Second),
		DBMaxOpenConns:        r.Int("MARKETDATA_DB_MAX_OPEN_CONNS", 20),
		DBMaxIdleConns:        r.Int("MARKETDATA_DB_MAX_IDLE_CONNS", 20),
		DBConnMaxLifetime:     r.Duration("MARKETDATA_DB_CONN_MAX_LIFETIME", 30*time.Minute),
		DBConnMaxIdleTime:     r.Duration("MARKETDATA_DB_CONN_MAX_IDLE_TIME", 5*time.Minute),
		CacheTTL:              r.Duration("MARKETDATA_CACHE_TTL", 5*time.Minute),
		CacheTimeout:          r.Duration("MARKETDATA_CACHE_TIMEOUT", 50*time.Millisecond),
		LocalCacheSize:        r.Int("MARKETDATA_LOCAL_CACHE_SIZE", 10_000),
		DataVersionPoll:       r.Duration("MARKETDATA_DATA_VERSION_POLL", 250*time.Millisecond),
		RateLimitMode:         r.String("MARKETDATA_RATELIMIT_MODE", RateLimitLease),
		KeyCacheTTL:           r.Duration("MARKETDATA_KEY_CACHE_TTL", 30*time.Second),
		AuthFailureLimit:      r.Int("MARKETDATA_AUTH_FAILURE_LIMIT", 20),
		AuthFailureWindow:     r.Duration("MARKETDATA_AUTH_FAILURE_WINDOW", time.Minute),
		PprofAddr:             r.String("MARKETDATA_PPROF_ADDR", ""),
	}
	c.Tracing = tracing.FromEnv(getenv)
	c.DatabaseReplicaURLs = r.List("MARKETDATA_DATABASE_REPLICA_URLS")
	c.ReplicaWait = r.Duration("MARKETDATA_DATABASE_REPLICA_WAIT", 10*time.Second)
	if c.DatabaseURL == "" {
		r.Fail("MARKETDATA_DATABASE_URL", "is required")
	}
	c.checkRedis(r)
	if err := auth.CheckCacheTTLSetting(c.KeyCacheTTL); err != nil {
		r.Fail("MARKETDATA_KEY_CACHE_TTL", err.Error())
	}
	if c.DBMaxOpenConns < 1 || c.DBMaxIdleConns < 0 || c.LocalCacheSize < 1 {
		r.Fail("MARKETDATA_DB_MAX_OPEN_CONNS", "pool and cache sizes must be positive")
	}
	if c.ReplicaWait <= 0 {
		r.Fail("MARKETDATA_DATABASE_REPLICA_WAIT", "must be positive")
	}
	if c.DataVersionPoll <= 0 {
		r.Fail("MARKETDATA_DATA_VERSION_POLL", "must be positive")
	}
	if c.RateLimitMode != RateLimitLease && c.RateLimitMode != RateLimitExact {
		r.Fail("MARKETDATA_RATELIMIT_MODE", "must be lease or exact")
	}
	if c.AuthFailureLimit < 1 || c.AuthFailureWindow <= 0 {
		r.Fail("MARKETDATA_AUTH_FAILURE_LIMIT", "and MARKETDATA_AUTH_FAILURE_WINDOW must be positive")
	}
	for _, o := range c.CORSOrigins {
		if !validOrigin(o) {
			r.Fail("MARKETDATA_CORS_ORIGINS", fmt.Sprintf("has %q: each entry must be * or an origin such as https://app.example.com", o))
		}
	}
	if c.PprofAddr != "" && c.PprofAddr == c.HTTPAddr {
		r.Fail("MARKETDATA_PPROF_ADDR", "must differ from MARKETDATA_HTTP_ADDR")
	}
	if err := r.Err(); err != nil {
		return Config{}, fmt.Errorf("load config: %w", err)
	}
	return c, nil
}

// LogValue masks the passwords in the connection URLs, so the configuration
// can be logged once at start-up.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("database_url", dsn.Mask(c.DatabaseURL)),
		slog.Any("database_replica_urls", maskAll(c.DatabaseReplicaURLs)),
		slog.String("database_replica_wait", c.ReplicaWait.String()),
		slog.String("redis_url", dsn.Mask(c.RedisURL)),
		slog.Any("redis_sentinel_addrs", c.RedisSentinelAddrs),
		slog.String("redis_sentinel_master", c.RedisSentinelMaster),
		slog.String("redis_sentinel_password", mask(c.RedisSentinelPassword)),
		slog.Any("redis_cluster_addrs", c.RedisClusterAddrs),
		slog.String("redis_password", mask(c.RedisPassword)),
		slog.String("http_addr", c.HTTPAddr),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.Any("cors_origins", c.CORSOrigins),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("shutdown_drain", c.ShutdownDrain.String()),
		slog.String("shutdown_timeout", c.ShutdownTimeout.String()),
		slog.String("request_timeout", c.RequestTimeout.String()),
		slog.String("statement_timeout", c.StatementTimeout.String()),
		slog.Int("db_max_open_conns", c.DBMaxOpenConns),
		slog.Int("db_max_idle_conns", c.DBMaxIdleConns),
		slog.String("cache_ttl", c.CacheTTL.String()),
		slog.String("cache_timeout", c.CacheTimeout.String()),
		slog.Int("local_cache_size", c.LocalCacheSize),
		slog.String("data_version_poll", c.DataVersionPoll.String()),
		slog.String("ratelimit_mode", c.RateLimitMode),
		slog.String("key_cache_ttl", c.KeyCacheTTL.String()),
		slog.Int("auth_failure_limit", c.AuthFailureLimit),
		slog.String("auth_failure_window", c.AuthFailureWindow.String()),
		slog.Bool("pprof", c.PprofAddr != ""),
		slog.Any("tracing", c.Tracing),
	)
}

func maskAll(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = dsn.Mask(u)
	}
	return out
}

// RedisConfigured tells whether any Redis mode is set; without one the
// cache and the limits stay in process.
func (c Config) RedisConfigured() bool {
	return c.RedisURL != "" || len(c.RedisSentinelAddrs) > 0 || len(c.RedisClusterAddrs) > 0
}

// checkRedis allows one Redis mode at most, each complete.
func (c Config) checkRedis(r *envconfig.Reader) {
	modes := 0
	for _, set := range []bool{c.RedisURL != "", len(c.RedisSentinelAddrs) > 0, len(c.RedisClusterAddrs) > 0} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		r.Fail("MARKETDATA_REDIS_URL", "MARKETDATA_REDIS_SENTINEL_ADDRS and MARKETDATA_REDIS_CLUSTER_ADDRS are exclusive: set one Redis mode")
	}
	if (len(c.RedisSentinelAddrs) > 0) != (c.RedisSentinelMaster != "") {
		r.Fail("MARKETDATA_REDIS_SENTINEL_MASTER", "and MARKETDATA_REDIS_SENTINEL_ADDRS go together: the master's name and the sentinels' host:port list")
	}
	if c.RedisURL != "" && (c.RedisPassword != "" || c.RedisSentinelPassword != "") {
		r.Fail("MARKETDATA_REDIS_PASSWORD", "applies to Sentinel and Cluster modes only; put the password in MARKETDATA_REDIS_URL")
	}
	for _, a := range append(append([]string(nil), c.RedisSentinelAddrs...), c.RedisClusterAddrs...) {
		if _, _, err := net.SplitHostPort(a); err != nil {
			r.Fail("MARKETDATA_REDIS_SENTINEL_ADDRS", fmt.Sprintf("or MARKETDATA_REDIS_CLUSTER_ADDRS has %q: each entry must be host:port", a))
		}
	}
}

// mask hides a password but tells whether one is set.
func mask(secret string) string {
	if secret == "" {
		return ""
	}
	return dsn.Masked
}

// validOrigin accepts "*" or a browser origin: http or https, a host, an
// optional port, and nothing after it (browsers send exactly that).
func validOrigin(o string) bool {
	if o == "*" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && u.Scheme+"://"+u.Host == o
}
