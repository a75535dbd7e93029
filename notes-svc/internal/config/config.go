// Package config reads the notes-svc configuration from NOTES_* environment
// variables into one validated struct.
package config

import (
	"errors"
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

// Prefix starts the name of every variable.
const Prefix = "NOTES_"

// Config is the whole configuration of notes-svc.
type Config struct {
	DatabaseURL string

	HTTPAddr              string
	HTTPReadTimeout       time.Duration
	HTTPReadHeaderTimeout time.Duration
	HTTPWriteTimeout      time.Duration
	HTTPIdleTimeout       time.Duration
	HTTPMaxHeaderBytes    int
	// TrustedProxies are the CIDRs or IPs whose X-Forwarded-For is
	// believed; empty trusts none.
	TrustedProxies []string
	// RequestTimeout bounds the handling of one API request.
	RequestTimeout time.Duration

	LogLevel slog.Level

	ShutdownDrain   time.Duration
	ShutdownTimeout time.Duration

	DBMaxOpenConns     int
	DBMaxIdleConns     int
	DBConnMaxLifetime  time.Duration
	DBConnMaxIdleTime  time.Duration
	DBStatementTimeout time.Duration

	// ListMaxConcurrent bounds the unpaged listings (no limit) in progress
	// in the process, ListMaxPerAccount those of one account; ListWait is
	// how long one over the process bound waits for a slot before 503.
	ListMaxConcurrent int
	ListMaxPerAccount int
	ListWait          time.Duration
	// ListBatchSize is the most notes one statement of a listing reads.
	ListBatchSize int

	KeyCacheTTL  time.Duration
	KeyCacheSize int
	// AuthFailureLimit invalid keys from one client address within
	// AuthFailureWindow block that address until the window ends.
	AuthFailureLimit      int
	AuthFailureWindow     time.Duration
	LastUsedFlushInterval time.Duration

	// PprofAddr serves net/http/pprof when set; it must not be the API
	// address.
	PprofAddr string
	// GCPercent is the garbage collector's target (runtime/debug
	// SetGCPercent) while serving. It applies only when the standard GOGC
	// variable is not set, which always wins.
	GCPercent int

	// Tracing is what the standard OTEL_* variables say: off unless
	// OTEL_TRACES_EXPORTER names an exporter (pkg/tracing).
	Tracing tracing.Settings
}

// Load reads the configuration through getenv and validates it. Every
// problem is reported, not just the first.
func Load(getenv func(string) string) (Config, error) {
	r := envconfig.New(getenv, Prefix)
	c := Config{
		DatabaseURL:           r.String("DATABASE_URL", ""),
		HTTPAddr:              r.String("HTTP_ADDR", ":8080"),
		HTTPReadTimeout:       r.Duration("HTTP_READ_TIMEOUT", 15*time.Second),
		HTTPReadHeaderTimeout: r.Duration("HTTP_READ_HEADER_TIMEOUT", 5*time.Second),
		HTTPWriteTimeout:      r.Duration("HTTP_WRITE_TIMEOUT", 60*time.Second),
		HTTPIdleTimeout:       r.Duration("HTTP_IDLE_TIMEOUT", 120*time.Second),
		HTTPMaxHeaderBytes:    r.Int("HTTP_MAX_HEADER_BYTES", 64<<10),
		TrustedProxies:        r.List("TRUSTED_PROXIES"),
		RequestTimeout:        r.Duration("REQUEST_TIMEOUT", 10*time.Second),
		ShutdownDrain:         r.Duration("SHUTDOWN_DRAIN", 5*time.Second),
		ShutdownTimeout:       r.Duration("SHUTDOWN_TIMEOUT", 20*time.Second),
		DBMaxOpenConns:        r.Int("DB_MAX_OPEN_CONNS", 20),
		DBConnMaxLifetime:     r.Duration("DB_CONN_MAX_LIFETIME", 30*time.Minute),
		DBConnMaxIdleTime:     r.Duration("DB_CONN_MAX_IDLE_TIME", 5*time.Minute),
		DBStatementTimeout:    r.Duration("DB_STATEMENT_TIMEOUT", 5*time.Second),
		KeyCacheTTL:           r.Duration("KEY_CACHE_TTL", 30*time.Second),
		KeyCacheSize:          r.Int("KEY_CACHE_SIZE", 10000),
		AuthFailureLimit:      r.Int("AUTH_FAILURE_LIMIT", 20),
		AuthFailureWindow:     r.Duration("AUTH_FAILURE_WINDOW", time.Minute),
		LastUsedFlushInterval: r.Duration("LAST_USED_FLUSH_INTERVAL", 30*time.Second),
		PprofAddr:             r.String("PPROF_ADDR", ""),
		GCPercent:             r.Int("GC_PERCENT", 400),
	}
	// Idle connections below the open limit make a busy pool close and
	// reopen PostgreSQL sessions under steady load, so by default every
	// open connection may stay idle.
	c.DBMaxIdleConns = r.Int("DB_MAX_IDLE_CONNS", c.DBMaxOpenConns)
	// A listing holds no connection while its client reads, but each one
	// in progress still costs a batch of memory and database time: a
	// quarter of the pool by default, and half of that for one account,
	// so that one account never holds every slot.
	c.ListMaxConcurrent = r.Int("LIST_MAX_CONCURRENT", min(max(c.DBMaxOpenConns, 1), max(2, c.DBMaxOpenConns/4)))
	c.ListMaxPerAccount = r.Int("LIST_MAX_PER_ACCOUNT", max(1, min(2, c.ListMaxConcurrent/2)))
	c.ListWait = r.Duration("LIST_WAIT", time.Second)
	c.ListBatchSize = r.Int("LIST_BATCH_SIZE", 500)
	c.LogLevel = r.Level("LOG_LEVEL", slog.LevelInfo)
	c.Tracing = tracing.FromEnv(getenv)
	r.Positive("HTTP_READ_TIMEOUT", c.HTTPReadTimeout)
	r.Positive("HTTP_READ_HEADER_TIMEOUT", c.HTTPReadHeaderTimeout)
	r.Positive("HTTP_WRITE_TIMEOUT", c.HTTPWriteTimeout)
	r.Positive("HTTP_IDLE_TIMEOUT", c.HTTPIdleTimeout)
	r.Positive("REQUEST_TIMEOUT", c.RequestTimeout)
	r.Positive("SHUTDOWN_TIMEOUT", c.ShutdownTimeout)
	r.Positive("DB_STATEMENT_TIMEOUT", c.DBStatementTimeout)
	r.Positive("LAST_USED_FLUSH_INTERVAL", c.LastUsedFlushInterval)
	if c.HTTPMaxHeaderBytes < 1024 {
		r.Fail("HTTP_MAX_HEADER_BYTES", "must be at least 1024")
	}
	if c.GCPercent < 25 {
		r.Fail("GC_PERCENT", "must be at least 25")
	}
	if c.DBMaxOpenConns < 1 {
		r.Fail("DB_MAX_OPEN_CONNS", "must be at least 1")
	}
	if c.DBMaxIdleConns < 0 || c.DBMaxIdleConns > c.DBMaxOpenConns {
		r.Fail("DB_MAX_IDLE_CONNS", "must be between 0 and DB_MAX_OPEN_CONNS")
	}
	if c.ListMaxConcurrent < 1 {
		r.Fail("LIST_MAX_CONCURRENT", "must be at least 1")
	}
	if c.ListMaxPerAccount < 1 || c.ListMaxPerAccount > max(c.ListMaxConcurrent, 1) {
		r.Fail("LIST_MAX_PER_ACCOUNT", "must be between 1 and LIST_MAX_CONCURRENT")
	}
	if c.ListWait >= c.RequestTimeout {
		r.Fail("LIST_WAIT", "must be below REQUEST_TIMEOUT")
	}
	if c.ListBatchSize < 1 || c.ListBatchSize > 10000 {
		r.Fail("LIST_BATCH_SIZE", "must be between 1 and 10000")
	}
	if err := auth.CheckCacheTTLSetting(c.KeyCacheTTL); err != nil {
		r.Fail("KEY_CACHE_TTL", err.Error())
	}
	if c.AuthFailureLimit < 1 || c.AuthFailureWindow <= 0 {
		r.Fail("AUTH_FAILURE_LIMIT", "and AUTH_FAILURE_WINDOW must be positive")
	}
	if c.KeyCacheSize < 1 {
		r.Fail("KEY_CACHE_SIZE", "must be at least 1")
	}
	if c.RequestTimeout > c.HTTPWriteTimeout {
		r.Fail("REQUEST_TIMEOUT", "must not exceed HTTP_WRITE_TIMEOUT")
	}
	if c.DatabaseURL != "" {
		if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			r.Fail("DATABASE_URL", "must be a postgres:// URL")
		}
	}
	for _, p := range c.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				r.Fail("TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP nor a CIDR", p))
			}
		}
	}
	if c.PprofAddr != "" && c.PprofAddr == c.HTTPAddr {
		r.Fail("PPROF_ADDR", "must differ from HTTP_ADDR: profiles are never served on the public port")
	}
	if err := r.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// RequireDatabase reports a missing NOTES_DATABASE_URL.
func (c Config) RequireDatabase() error {
	if c.DatabaseURL == "" {
		return errors.New(Prefix + "DATABASE_URL is required")
	}
	return nil
}

// LogValue implements slog.LogValuer with secrets masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("database_url", dsn.Mask(c.DatabaseURL)),
		slog.String("http_addr", c.HTTPAddr),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.String("request_timeout", c.RequestTimeout.String()),
		slog.String("http_read_timeout", c.HTTPReadTimeout.String()),
		slog.String("http_read_header_timeout", c.HTTPReadHeaderTimeout.String()),
		slog.String("http_write_timeout", c.HTTPWriteTimeout.String()),
		slog.String("http_idle_timeout", c.HTTPIdleTimeout.String()),
		slog.Int("http_max_header_bytes", c.HTTPMaxHeaderBytes),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("shutdown_drain", c.ShutdownDrain.String()),
		slog.String("shutdown_timeout", c.ShutdownTimeout.String()),
		slog.Int("db_max_open_conns", c.DBMaxOpenConns),
		slog.Int("db_max_idle_conns", c.DBMaxIdleConns),
		slog.String("db_conn_max_lifetime", c.DBConnMaxLifetime.String()),
		slog.String("db_conn_max_idle_time", c.DBConnMaxIdleTime.String()),
		slog.String("db_statement_timeout", c.DBStatementTimeout.String()),
		slog.Int("list_max_concurrent", c.ListMaxConcurrent),
		slog.Int("list_max_per_account", c.ListMaxPerAccount),
		slog.String("list_wait", c.ListWait.String()),
		slog.Int("list_batch_size", c.ListBatchSize),
		slog.String("key_cache_ttl", c.KeyCacheTTL.String()),
		slog.Int("key_cache_size", c.KeyCacheSize),
		slog.Int("auth_failure_limit", c.AuthFailureLimit),
		slog.String("auth_failure_window", c.AuthFailureWindow.String()),
		slog.String("last_used_flush_interval", c.LastUsedFlushInterval.String()),
		slog.String("pprof_addr", c.PprofAddr),
		slog.Int("gc_percent", c.GCPercent),
		slog.Any("tracing", c.Tracing),
	)
}
