// Package config reads marketdata-svc's configuration from MARKETDATA_*
// environment variables into one struct, validated once at start-up.
package config

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/envconfig"
)

// Config is the whole configuration of marketdata-svc.
type Config struct {
	// Service holds the settings notes-svc reads alike.
	envconfig.Service

	// DatabaseURL is the PostgreSQL store of record (required).
	DatabaseURL string
	// DatabaseReplicaURLs are PostgreSQL streaming replicas of DatabaseURL
	// that serve the API's reads (the replicas.Router); none by default.
	DatabaseReplicaURLs []string
	// ReplicaWait bounds how long an import waits for the replicas to
	// replay its commit before it publishes the new data version.
	ReplicaWait time.Duration
	// ReplicaReadTimeout bounds one read on a replica: past it the read is
	// retried on the primary and the replica leaves the rotation for a
	// while. At most half of the request timeout, so the primary has time.
	ReplicaReadTimeout time.Duration
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
	// CORSOrigins are the browser origins (scheme://host[:port], or "*" for
	// any) allowed to call the API; none by default, and then no CORS
	// header is sent.
	CORSOrigins []string
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
	// CacheMaxEntryBytes is the largest page kept in Redis: a larger one
	// is served but not cached, so that Redis's memory stays within
	// request rate × CacheTTL × this size whatever the queries.
	CacheMaxEntryBytes int
	// DataVersionPoll is how often the data version is re-read (from
	// Redis, else the database): the bound on serving an older version
	// after an import when its announcement is lost.
	DataVersionPoll time.Duration
	// RateLimitMode is how limits are checked in Redis: "lease" (tokens
	// leased in batches and spent in process memory, no round trip per
	// request) or "exact" (one Redis script per request).
	RateLimitMode string
	// UsageSyncInterval is how often each replica copies the monthly usage
	// counters it changed from Redis to the database, the copy a Redis
	// that lost them is restored from (ratelimit.UsageSync).
	UsageSyncInterval time.Duration
	// Sync configures `marketdata-svc sync`, the daily feed from data
	// providers (MARKETDATA_SYNC_*).
	Sync Sync
}

// Sync configures the providers `marketdata-svc sync` reads.
type Sync struct {
	// Timeout bounds one request to a provider, its body included.
	Timeout time.Duration
	// Retries is how many times a 429, a 5xx or a failed connection is
	// retried, after Backoff doubled each time up to MaxBackoff (with
	// jitter), or the answer's Retry-After.
	Retries             int
	Backoff, MaxBackoff time.Duration
	// Concurrency is how many symbols are fetched at once (--concurrency
	// overrides it).
	Concurrency int
	// One per provider, from MARKETDATA_SYNC_<NAME>_*.
	Marketstack, Tiingo, EODHD, Stooq, EDGAR SyncProvider
	// EDGARUserAgent is the User-Agent sent to SEC EDGAR, which asks every
	// client to name itself and a contact ("Company admin@example.com").
	EDGARUserAgent string
}

// SyncProvider is one provider's credential, base URL and rate.
type SyncProvider struct {
	// Token is the credential (MARKETDATA_SYNC_<NAME>_TOKEN); logged only
	// as set or not.
	Token string
	// URL overrides the provider's base URL, for a proxy or a test.
	URL string
	// RatePerMinute and Burst shape the token bucket all of the
	// provider's requests take from.
	RatePerMinute, Burst int
}

// Provider returns the settings of the provider name, and whether it is
// one.
func (s Sync) Provider(name string) (SyncProvider, bool) {
	switch name {
	case "marketstack":
		return s.Marketstack, true
	case "tiingo":
		return s.Tiingo, true
	case "eodhd":
		return s.EODHD, true
	case "stooq":
		return s.Stooq, true
	case "edgar":
		return s.EDGAR, true
	}
	return SyncProvider{}, false
}

// Prefix starts the name of every variable.
const Prefix = "MARKETDATA_"

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
	r := envconfig.New(getenv, Prefix)
	c := Config{
		Service:               r.Service(":8081"),
		DatabaseURL:           r.DSN("DATABASE_URL"),
		RedisURL:              r.DSN("REDIS_URL"),
		RedisSentinelAddrs:    r.List("REDIS_SENTINEL_ADDRS"),
		RedisSentinelMaster:   r.String("REDIS_SENTINEL_MASTER", ""),
		RedisSentinelPassword: r.Secret("REDIS_SENTINEL_PASSWORD"),
		RedisClusterAddrs:     r.List("REDIS_CLUSTER_ADDRS"),
		RedisPassword:         r.Secret("REDIS_PASSWORD"),
		CORSOrigins:           r.List("CORS_ORIGINS"),
		StatementTimeout:      r.DurationIn("STATEMENT_TIMEOUT", 5*time.Second, 100*time.Millisecond, 10*time.Minute),
		DBMaxOpenConns:        r.IntIn("DB_MAX_OPEN_CONNS", 20, 1, 1000),
		DBMaxIdleConns:        r.IntIn("DB_MAX_IDLE_CONNS", 20, 0, 1000),
		DBConnMaxLifetime:     r.DurationIn("DB_CONN_MAX_LIFETIME", 30*time.Minute, time.Minute, 24*time.Hour),
		DBConnMaxIdleTime:     r.DurationIn("DB_CONN_MAX_IDLE_TIME", 5*time.Minute, time.Second, 24*time.Hour),
		CacheTTL:              r.DurationIn("CACHE_TTL", 5*time.Minute, time.Second, 24*time.Hour),
		CacheTimeout:          r.DurationIn("CACHE_TIMEOUT", 50*time.Millisecond, 5*time.Millisecond, 30*time.Second),
		LocalCacheSize:        r.IntIn("LOCAL_CACHE_SIZE", 10_000, 1, 10_000_000),
		CacheMaxEntryBytes:    r.IntIn("CACHE_MAX_ENTRY_BYTES", 1<<20, 1<<10, 64<<20),
		DataVersionPoll:       r.DurationIn("DATA_VERSION_POLL", 250*time.Millisecond, 10*time.Millisecond, time.Minute),
		RateLimitMode:         r.String("RATELIMIT_MODE", RateLimitLease),
		UsageSyncInterval:     r.DurationIn("USAGE_SYNC_INTERVAL", 5*time.Second, time.Second, 5*time.Minute),
	}
	c.DatabaseReplicaURLs = r.DSNList("DATABASE_REPLICA_URLS")
	c.ReplicaWait = r.DurationIn("DATABASE_REPLICA_WAIT", 10*time.Second, 100*time.Millisecond, 10*time.Minute)
	// 1 s, or half a request timeout shorter than 2 s.
	half := max(c.RequestTimeout/2, 10*time.Millisecond)
	c.ReplicaReadTimeout = r.DurationIn("DATABASE_REPLICA_READ_TIMEOUT", min(time.Second, half), 10*time.Millisecond, half)
	c.Sync = loadSync(r)
	if c.DatabaseURL == "" {
		r.Fail("DATABASE_URL", "is required")
	}
	c.checkRedis(r)
	if c.RateLimitMode != RateLimitLease && c.RateLimitMode != RateLimitExact {
		r.Fail("RATELIMIT_MODE", "must be lease or exact")
	}
	for _, o := range c.CORSOrigins {
		if !validOrigin(o) {
			r.Fail("CORS_ORIGINS", fmt.Sprintf("has %q: each entry must be * or an origin such as https://app.example.com", o))
		}
	}
	if err := r.Err(); err != nil {
		return Config{}, fmt.Errorf("load config: %w", err)
	}
	return c, nil
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
		r.Fail("REDIS_URL", "MARKETDATA_REDIS_SENTINEL_ADDRS and MARKETDATA_REDIS_CLUSTER_ADDRS are exclusive: set one Redis mode")
	}
	if (len(c.RedisSentinelAddrs) > 0) != (c.RedisSentinelMaster != "") {
		r.Fail("REDIS_SENTINEL_MASTER", "and MARKETDATA_REDIS_SENTINEL_ADDRS go together: the master's name and the sentinels' host:port list")
	}
	if c.RedisURL != "" && (c.RedisPassword != "" || c.RedisSentinelPassword != "") {
		r.Fail("REDIS_PASSWORD", "applies to Sentinel and Cluster modes only; put the password in MARKETDATA_REDIS_URL")
	}
	for _, a := range append(append([]string(nil), c.RedisSentinelAddrs...), c.RedisClusterAddrs...) {
		if _, _, err := net.SplitHostPort(a); err != nil {
			r.Fail("REDIS_SENTINEL_ADDRS", fmt.Sprintf("or MARKETDATA_REDIS_CLUSTER_ADDRS has %q: each entry must be host:port", a))
		}
	}
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

// loadSync reads MARKETDATA_SYNC_*. The default rates sit under each
// provider's documented plan limits; raise them to the plan bought.
func loadSync(r *envconfig.Reader) Sync {
	s := Sync{
		Timeout:     r.DurationIn("SYNC_TIMEOUT", 30*time.Second, time.Second, 10*time.Minute),
		Retries:     r.IntIn("SYNC_RETRIES", 5, 0, 20),
		Backoff:     r.DurationIn("SYNC_BACKOFF", time.Second, 10*time.Millisecond, time.Minute),
		MaxBackoff:  r.DurationIn("SYNC_MAX_BACKOFF", time.Minute, 100*time.Millisecond, time.Hour),
		Concurrency: r.IntIn("SYNC_CONCURRENCY", 4, 1, 64),
	}
	// Each name is spelt out whole, one provider a line: the deploy checks
	// find the variables a service reads by their literal names.
	s.Marketstack = SyncProvider{Token: r.Secret("SYNC_MARKETSTACK_TOKEN"), URL: syncURL("SYNC_MARKETSTACK_URL", r), RatePerMinute: r.IntIn("SYNC_MARKETSTACK_RATE_PER_MINUTE", 300, 1, 100_000), Burst: r.IntIn("SYNC_MARKETSTACK_BURST", 10, 1, 10_000)}
	s.Tiingo = SyncProvider{Token: r.Secret("SYNC_TIINGO_TOKEN"), URL: syncURL("SYNC_TIINGO_URL", r), RatePerMinute: r.IntIn("SYNC_TIINGO_RATE_PER_MINUTE", 100, 1, 100_000), Burst: r.IntIn("SYNC_TIINGO_BURST", 5, 1, 10_000)}
	s.EODHD = SyncProvider{Token: r.Secret("SYNC_EODHD_TOKEN"), URL: syncURL("SYNC_EODHD_URL", r), RatePerMinute: r.IntIn("SYNC_EODHD_RATE_PER_MINUTE", 900, 1, 100_000), Burst: r.IntIn("SYNC_EODHD_BURST", 20, 1, 10_000)}
	s.Stooq = SyncProvider{Token: r.Secret("SYNC_STOOQ_TOKEN"), URL: syncURL("SYNC_STOOQ_URL", r), RatePerMinute: r.IntIn("SYNC_STOOQ_RATE_PER_MINUTE", 60, 1, 100_000), Burst: r.IntIn("SYNC_STOOQ_BURST", 2, 1, 10_000)}
	// SEC allows 10 requests a second; EDGAR takes no token.
	s.EDGAR = SyncProvider{URL: syncURL("SYNC_EDGAR_URL", r), RatePerMinute: r.IntIn("SYNC_EDGAR_RATE_PER_MINUTE", 480, 1, 600), Burst: r.IntIn("SYNC_EDGAR_BURST", 5, 1, 10)}
	s.EDGARUserAgent = r.String("SYNC_EDGAR_USER_AGENT", "")
	return s
}

// syncURL reads a provider's base URL override: http or https, without
// credentials (the token has a variable of its own, which is logged masked).
func syncURL(name string, r *envconfig.Reader) string {
	v := r.String(name, "")
	if v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			r.Fail(name, "must be an http or https URL without credentials")
		}
	}
	return v
}
