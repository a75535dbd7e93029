// Package config reads the notes-svc configuration from NOTES_* environment
// variables into one validated struct.
package config

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/envconfig"
)

// Prefix starts the name of every variable.
const Prefix = "NOTES_"

// Config is the whole configuration of notes-svc.
type Config struct {
	// Service holds the settings marketdata-svc reads alike.
	envconfig.Service

	DatabaseURL string

	HTTPReadTimeout       time.Duration
	HTTPReadHeaderTimeout time.Duration
	HTTPWriteTimeout      time.Duration
	HTTPIdleTimeout       time.Duration
	HTTPMaxHeaderBytes    int

	DBMaxOpenConns     int
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

	KeyCacheSize          int
	LastUsedFlushInterval time.Duration

	// RateLimitPerSecond is the requests per second each API key may make,
	// with a burst of one second's worth; 0 turns the limit off. Each
	// instance counts its own requests (notes-svc has no shared store),
	// so N replicas admit up to N times the rate.
	RateLimitPerSecond int

	// EventRetention is how long the event log keeps an event (and the
	// feed serves it); TrashRetention how long a trashed note stays before
	// it is purged.
	EventRetention time.Duration
	TrashRetention time.Duration
	// WebhookSecretKey seals webhook endpoint secrets at rest (AES-256-GCM):
	// 32 bytes in standard base64, logged masked. Without it secrets are
	// stored unsealed (docs/API.md says so).
	WebhookSecretKey string
	// WebhookAllowPrivate lets webhooks use plain http and reach loopback
	// and private addresses: for development and tests only.
	WebhookAllowPrivate bool
	// WebhookWorkers bounds the deliveries in progress in the process,
	// WebhookPerEndpoint those to one endpoint across replicas.
	WebhookWorkers     int
	WebhookPerEndpoint int
	// WebhookRetryBase is the first retry's delay, doubled each attempt:
	// 30 s in production; drills that take a receiver down shorten it so
	// that the retries land within the drill.
	WebhookRetryBase time.Duration

	// GCPercent is the garbage collector's target (runtime/debug
	// SetGCPercent) while serving. It applies only when the standard GOGC
	// variable is not set, which always wins.
	GCPercent int
}

// Load reads the configuration through getenv and validates it. Every
// problem is reported, not just the first.
func Load(getenv func(string) string) (Config, error) {
	r := envconfig.New(getenv, Prefix)
	c := Config{
		Service:               r.Service(":8080"),
		DatabaseURL:           r.DSN("DATABASE_URL"),
		HTTPReadTimeout:       r.DurationIn("HTTP_READ_TIMEOUT", 15*time.Second, 100*time.Millisecond, 10*time.Minute),
		HTTPReadHeaderTimeout: r.DurationIn("HTTP_READ_HEADER_TIMEOUT", 5*time.Second, 100*time.Millisecond, time.Minute),
		HTTPWriteTimeout:      r.DurationIn("HTTP_WRITE_TIMEOUT", 60*time.Second, 100*time.Millisecond, 10*time.Minute),
		HTTPIdleTimeout:       r.DurationIn("HTTP_IDLE_TIMEOUT", 120*time.Second, time.Second, time.Hour),
		HTTPMaxHeaderBytes:    r.IntIn("HTTP_MAX_HEADER_BYTES", 64<<10, 1024, 1<<20),
		DBMaxOpenConns:        r.IntIn("DB_MAX_OPEN_CONNS", 20, 1, 1000),
		DBConnMaxLifetime:     r.DurationIn("DB_CONN_MAX_LIFETIME", 30*time.Minute, time.Minute, 24*time.Hour),
		DBConnMaxIdleTime:     r.DurationIn("DB_CONN_MAX_IDLE_TIME", 5*time.Minute, time.Second, 24*time.Hour),
		DBStatementTimeout:    r.DurationIn("DB_STATEMENT_TIMEOUT", 5*time.Second, 100*time.Millisecond, 10*time.Minute),
		KeyCacheSize:          r.IntIn("KEY_CACHE_SIZE", 10000, 1, 10_000_000),
		LastUsedFlushInterval: r.DurationIn("LAST_USED_FLUSH_INTERVAL", 30*time.Second, time.Second, time.Hour),
		GCPercent:             r.IntIn("GC_PERCENT", 400, 25, 100_000),
		RateLimitPerSecond:    r.IntIn("RATE_LIMIT_PER_SECOND", 50, 0, 100_000),
		// At least a week, so that a client away over a long weekend can
		// still catch up; at most a year of events kept.
		EventRetention:     r.DurationIn("EVENT_RETENTION", 30*24*time.Hour, 7*24*time.Hour, 365*24*time.Hour),
		TrashRetention:     r.DurationIn("TRASH_RETENTION", 30*24*time.Hour, 7*24*time.Hour, 365*24*time.Hour),
		WebhookSecretKey:   r.Secret("WEBHOOK_SECRET_KEY"),
		WebhookPerEndpoint: r.IntIn("WEBHOOK_PER_ENDPOINT", 4, 1, 100),
		WebhookRetryBase:   r.DurationIn("WEBHOOK_RETRY_BASE", 30*time.Second, 100*time.Millisecond, time.Hour),
	}
	switch v := strings.ToLower(r.String("WEBHOOK_ALLOW_PRIVATE", "false")); v {
	case "true", "1":
		c.WebhookAllowPrivate = true
	case "false", "0":
	default:
		r.Fail("WEBHOOK_ALLOW_PRIVATE", "must be true or false")
	}
	if c.WebhookSecretKey != "" {
		if k, err := base64.StdEncoding.DecodeString(c.WebhookSecretKey); err != nil || len(k) != 32 {
			r.Fail("WEBHOOK_SECRET_KEY", "must be 32 bytes in standard base64 (openssl rand -base64 32)")
		}
	}
	// A listing holds no connection while its client reads, but each one
	// in progress still costs a batch of memory and database time: a
	// quarter of the pool by default, and half of that for one account,
	// so that one account never holds every slot.
	c.ListMaxConcurrent = r.IntIn("LIST_MAX_CONCURRENT", min(max(c.DBMaxOpenConns, 1), max(2, c.DBMaxOpenConns/4)), 1, 10_000)
	c.ListMaxPerAccount = r.Int("LIST_MAX_PER_ACCOUNT", max(1, min(2, c.ListMaxConcurrent/2)))
	c.ListWait = r.DurationOrOff("LIST_WAIT", time.Second, time.Millisecond, time.Minute)
	c.ListBatchSize = r.IntIn("LIST_BATCH_SIZE", 500, 1, 10_000)
	// Each webhook attempt holds a pool connection while it sends: as many
	// workers as connections would leave none for the API or the queue, so
	// by default they take at most half the pool.
	c.WebhookWorkers = r.IntIn("WEBHOOK_WORKERS", max(1, min(10, c.DBMaxOpenConns/2)), 1, 1000)
	if c.WebhookWorkers >= c.DBMaxOpenConns && c.DBMaxOpenConns > 1 {
		r.Fail("WEBHOOK_WORKERS", "must be below DB_MAX_OPEN_CONNS")
	}
	if c.ListMaxPerAccount < 1 || c.ListMaxPerAccount > max(c.ListMaxConcurrent, 1) {
		r.Fail("LIST_MAX_PER_ACCOUNT", "must be between 1 and LIST_MAX_CONCURRENT")
	}
	if c.ListWait >= c.RequestTimeout {
		r.Fail("LIST_WAIT", "must be below REQUEST_TIMEOUT")
	}
	if c.RequestTimeout > c.HTTPWriteTimeout {
		r.Fail("REQUEST_TIMEOUT", "must not exceed HTTP_WRITE_TIMEOUT")
	}
	if c.DatabaseURL != "" {
		if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			r.Fail("DATABASE_URL", "must be a postgres:// URL")
		}
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
