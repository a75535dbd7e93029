// Package config reads the notes-svc configuration from NOTES_* environment
// variables into one validated struct.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/dsn"
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
}

// Load reads the configuration through getenv and validates it. Every
// problem is reported, not just the first.
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		DatabaseURL:           r.str("DATABASE_URL", ""),
		HTTPAddr:              r.str("HTTP_ADDR", ":8080"),
		HTTPReadTimeout:       r.duration("HTTP_READ_TIMEOUT", 15*time.Second),
		HTTPReadHeaderTimeout: r.duration("HTTP_READ_HEADER_TIMEOUT", 5*time.Second),
		HTTPWriteTimeout:      r.duration("HTTP_WRITE_TIMEOUT", 60*time.Second),
		HTTPIdleTimeout:       r.duration("HTTP_IDLE_TIMEOUT", 120*time.Second),
		HTTPMaxHeaderBytes:    r.integer("HTTP_MAX_HEADER_BYTES", 64<<10),
		TrustedProxies:        r.list("TRUSTED_PROXIES"),
		RequestTimeout:        r.duration("REQUEST_TIMEOUT", 10*time.Second),
		ShutdownDrain:         r.duration("SHUTDOWN_DRAIN", 5*time.Second),
		ShutdownTimeout:       r.duration("SHUTDOWN_TIMEOUT", 20*time.Second),
		DBMaxOpenConns:        r.integer("DB_MAX_OPEN_CONNS", 20),
		DBConnMaxLifetime:     r.duration("DB_CONN_MAX_LIFETIME", 30*time.Minute),
		DBConnMaxIdleTime:     r.duration("DB_CONN_MAX_IDLE_TIME", 5*time.Minute),
		DBStatementTimeout:    r.duration("DB_STATEMENT_TIMEOUT", 5*time.Second),
		KeyCacheTTL:           r.duration("KEY_CACHE_TTL", 30*time.Second),
		KeyCacheSize:          r.integer("KEY_CACHE_SIZE", 10000),
		AuthFailureLimit:      r.integer("AUTH_FAILURE_LIMIT", 20),
		AuthFailureWindow:     r.duration("AUTH_FAILURE_WINDOW", time.Minute),
		LastUsedFlushInterval: r.duration("LAST_USED_FLUSH_INTERVAL", 30*time.Second),
		PprofAddr:             r.str("PPROF_ADDR", ""),
		GCPercent:             r.integer("GC_PERCENT", 400),
	}
	// Idle connections below the open limit make a busy pool close and
	// reopen PostgreSQL sessions under steady load, so by default every
	// open connection may stay idle.
	c.DBMaxIdleConns = r.integer("DB_MAX_IDLE_CONNS", c.DBMaxOpenConns)
	// A listing holds no connection while its client reads, but each one
	// in progress still costs a batch of memory and database time: a
	// quarter of the pool by default, and half of that for one account,
	// so that one account never holds every slot.
	c.ListMaxConcurrent = r.integer("LIST_MAX_CONCURRENT", min(max(c.DBMaxOpenConns, 1), max(2, c.DBMaxOpenConns/4)))
	c.ListMaxPerAccount = r.integer("LIST_MAX_PER_ACCOUNT", max(1, min(2, c.ListMaxConcurrent/2)))
	c.ListWait = r.duration("LIST_WAIT", time.Second)
	c.ListBatchSize = r.integer("LIST_BATCH_SIZE", 500)
	switch lvl := strings.ToLower(r.str("LOG_LEVEL", "info")); lvl {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		r.fail("LOG_LEVEL", "must be debug, info, warn or error")
	}
	r.positive("HTTP_READ_TIMEOUT", c.HTTPReadTimeout)
	r.positive("HTTP_READ_HEADER_TIMEOUT", c.HTTPReadHeaderTimeout)
	r.positive("HTTP_WRITE_TIMEOUT", c.HTTPWriteTimeout)
	r.positive("HTTP_IDLE_TIMEOUT", c.HTTPIdleTimeout)
	r.positive("REQUEST_TIMEOUT", c.RequestTimeout)
	r.positive("SHUTDOWN_TIMEOUT", c.ShutdownTimeout)
	r.positive("DB_STATEMENT_TIMEOUT", c.DBStatementTimeout)
	r.positive("LAST_USED_FLUSH_INTERVAL", c.LastUsedFlushInterval)
	if c.ShutdownDrain < 0 {
		r.fail("SHUTDOWN_DRAIN", "must not be negative")
	}
	if c.HTTPMaxHeaderBytes < 1024 {
		r.fail("HTTP_MAX_HEADER_BYTES", "must be at least 1024")
	}
	if c.GCPercent < 25 {
		r.fail("GC_PERCENT", "must be at least 25")
	}
	if c.DBMaxOpenConns < 1 {
		r.fail("DB_MAX_OPEN_CONNS", "must be at least 1")
	}
	if c.DBMaxIdleConns < 0 || c.DBMaxIdleConns > c.DBMaxOpenConns {
		r.fail("DB_MAX_IDLE_CONNS", "must be between 0 and DB_MAX_OPEN_CONNS")
	}
	if c.ListMaxConcurrent < 1 {
		r.fail("LIST_MAX_CONCURRENT", "must be at least 1")
	}
	if c.ListMaxPerAccount < 1 || c.ListMaxPerAccount > max(c.ListMaxConcurrent, 1) {
		r.fail("LIST_MAX_PER_ACCOUNT", "must be between 1 and LIST_MAX_CONCURRENT")
	}
	if c.ListWait < 0 || c.ListWait >= c.RequestTimeout {
		r.fail("LIST_WAIT", "must be at least 0 and below REQUEST_TIMEOUT")
	}
	if c.ListBatchSize < 1 || c.ListBatchSize > 10000 {
		r.fail("LIST_BATCH_SIZE", "must be between 1 and 10000")
	}
	if c.KeyCacheTTL < 0 || c.KeyCacheTTL > 60*time.Second {
		r.fail("KEY_CACHE_TTL", "must be between 0 (no key cache) and 60s: it bounds how long a revoked key keeps working")
	}
	if c.AuthFailureLimit < 1 || c.AuthFailureWindow <= 0 {
		r.fail("AUTH_FAILURE_LIMIT", "and AUTH_FAILURE_WINDOW must be positive")
	}
	if c.KeyCacheSize < 1 {
		r.fail("KEY_CACHE_SIZE", "must be at least 1")
	}
	if c.RequestTimeout > c.HTTPWriteTimeout {
		r.fail("REQUEST_TIMEOUT", "must not exceed HTTP_WRITE_TIMEOUT")
	}
	if c.DatabaseURL != "" {
		if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			r.fail("DATABASE_URL", "must be a postgres:// URL")
		}
	}
	for _, p := range c.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				r.fail("TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP nor a CIDR", p))
			}
		}
	}
	if c.PprofAddr != "" && c.PprofAddr == c.HTTPAddr {
		r.fail("PPROF_ADDR", "must differ from HTTP_ADDR: profiles are never served on the public port")
	}
	if len(r.errs) > 0 {
		return Config{}, errors.Join(r.errs...)
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
	)
}

type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) fail(name, msg string) {
	r.errs = append(r.errs, fmt.Errorf("%s%s: %s", Prefix, name, msg))
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(Prefix + name)); v != "" {
		return v
	}
	return def
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail(name, "must be a duration such as 5s or 250ms")
		return def
	}
	return d
}

func (r *reader) integer(name string, def int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.fail(name, "must be a whole number")
		return def
	}
	return n
}

func (r *reader) positive(name string, d time.Duration) {
	if d <= 0 {
		r.fail(name, "must be positive")
	}
}

func (r *reader) list(name string) []string {
	var out []string
	for p := range strings.SplitSeq(r.str(name, ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
