// Package postgres opens PostgreSQL connection pools and classifies driver
// errors, the same way in both services: a statement timeout, a lost
// connection or a shut-down server must mean the same thing to a client of
// notes-svc as to one of marketdata-svc.
//
// Behind a failover (Patroni promoting a standby, docs/OPERATIONS.md), the
// errors a client sees for a few seconds are of two kinds: a connection to
// the old primary that is cut, and a statement on a node that is now a
// standby (SQLSTATE 25006). Both are Unavailable, Retryable says whether an
// error is worth one more try, and RetryOnce gives an operation that is
// safe to repeat that one try inside the caller's deadline.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// DefaultConnectTimeout bounds dialing when neither the URL nor the options
// set a connect timeout: without one, a black-holed database address hangs
// the first query of every connection for the kernel's TCP timeout.
const DefaultConnectTimeout = 5 * time.Second

// ErrInvalidURL stands in for a URL parse failure, whose text can quote the
// URL with its password.
var ErrInvalidURL = errors.New("invalid database URL")

// ErrReadOnly is a server that answers but is a standby: a primary that was
// demoted, or a standby an address still leads to. For a writer it is a
// database that is not there, so it classifies as Unavailable.
var ErrReadOnly = errors.New("database is a read-only standby")

// PoolOptions bound the connection pool and every session of it.
type PoolOptions struct {
	// ApplicationName is reported in pg_stat_activity unless the URL sets
	// one.
	ApplicationName string
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	ConnMaxIdleTime time.Duration
	// StatementTimeout is PostgreSQL's statement_timeout for every
	// statement of the pool (zero leaves the server default). A session
	// idle inside a transaction for twice as long is ended by the server
	// (idle_in_transaction_session_timeout), so a stuck caller cannot hold
	// locks forever either.
	StatementTimeout time.Duration
	// ConnectTimeout bounds dialing; zero keeps the URL's connect_timeout
	// or DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Tracer, when set, sees every statement of the pool's connections
	// (pkg/tracing's spans); nil, the default, leaves pgx's hot path
	// without a tracer call.
	Tracer pgx.QueryTracer
}

// ParseConfig parses rawURL and applies o's session settings. Its error
// never quotes the URL.
func ParseConfig(rawURL string, o PoolOptions) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, ErrInvalidURL
	}
	configure(cfg, o)
	return cfg, nil
}

// configure applies o's session settings to cfg.
func configure(cfg *pgx.ConnConfig, o PoolOptions) {
	if o.ConnectTimeout > 0 {
		cfg.ConnectTimeout = o.ConnectTimeout
	} else if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok && o.ApplicationName != "" {
		cfg.RuntimeParams["application_name"] = o.ApplicationName
	}
	// Every statement of either service answers a request or loads a
	// batch and runs for milliseconds; PostgreSQL's JIT, which it turns on
	// for any plan its costs call dear (jit_above_cost), compiled for
	// 490 ms of a 710 ms latest-prices read to save nothing (bench
	// scale_eod_latest). The URL may still turn it on.
	if _, ok := cfg.RuntimeParams["jit"]; !ok {
		cfg.RuntimeParams["jit"] = "off"
	}
	if o.Tracer != nil {
		cfg.Tracer = o.Tracer
	}
	// A commit acknowledged without its synchronous standby must not
	// reach the caller as a success (ErrCommitNotReplicated).
	cfg.BuildFrontend = buildSyncRepFrontend
	if o.StatementTimeout > 0 {
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt((2 * o.StatementTimeout).Milliseconds(), 10)
	}
}

// Open returns a pool on cfg with o's limits. It does not connect: the
// first query or Ping does, so a service can start while the database is
// still coming up and report itself not ready.
func Open(cfg *pgx.ConnConfig, o PoolOptions) *sql.DB {
	db := stdlib.OpenDB(*cfg)
	if o.MaxOpenConns > 0 {
		db.SetMaxOpenConns(o.MaxOpenConns)
	}
	db.SetMaxIdleConns(o.MaxIdleConns)
	db.SetConnMaxLifetime(o.ConnMaxLifetime)
	db.SetConnMaxIdleTime(o.ConnMaxIdleTime)
	return db
}

// Class is what a driver error means to a caller.
type Class int

// The classes of Classify.
const (
	// Other is an error with no class of its own here (a constraint
	// violation, a syntax error): the store decides what it means.
	Other Class = iota
	// NoRows is a query that found nothing.
	NoRows
	// Timeout is work cut off by a deadline: the statement timeout
	// (57014), a lock wait (55P03) or the caller's context deadline.
	Timeout
	// Unavailable is a database that cannot be reached or kept: a failed
	// dial, a lost connection, a server shutting down or starting (57P0x),
	// too many connections (53300), any connection exception (08xxx), or a
	// node that is a standby now (read-only transaction 25006, ErrReadOnly).
	Unavailable
	// Conflict is a transaction that lost to a concurrent one
	// (serialization failure 40001, deadlock 40P01); retrying may succeed.
	Conflict
	// Canceled is a caller that went away (context.Canceled).
	Canceled
)

// Classify returns the class of err, looking through wrapping.
func Classify(err error) Class {
	if err == nil {
		return Other
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "57014", code == "55P03":
			return Timeout
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300",
			code == "25006":
			return Unavailable
		case code == "40001", code == "40P01":
			return Conflict
		}
		return Other
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, pgx.ErrNoRows):
		return NoRows
	case errors.Is(err, ErrReadOnly), errors.Is(err, ErrCommitNotReplicated):
		return Unavailable
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.As(err, &connErr), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.SafeToRetry(err):
		return Unavailable
	}
	return Other
}

// Retryable reports whether err is worth one more try of an operation that
// is safe to repeat: the database was unreachable, cut the connection or
// turned out to be a standby, which is what a failover looks like from a
// client. A timeout is not: the work may still be running, and a second
// try doubles the load on a database that is already slow.
func Retryable(err error) bool { return Classify(err) == Unavailable }

// RetryPause is the wait before RetryOnce's second try: long enough for a
// pool to drop its dead connections and for HAProxy to mark a demoted node
// down, short against a request's deadline.
const RetryPause = 250 * time.Millisecond

// RetryOnce runs op and, when it fails with a Retryable error, runs it once
// more after RetryPause, unless ctx ends first. Only an operation whose
// repetition cannot apply twice may be given to it: a read, a write
// carrying an idempotency key, or one conditioned on the version it read
// (If-Match). A plain insert whose commit may or may not have happened
// must not be retried: the caller reports its unknown outcome instead.
func RetryOnce[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	v, err := op(ctx)
	if err == nil || !Retryable(err) {
		return v, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 2*RetryPause {
		return v, err
	}
	t := time.NewTimer(RetryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return v, err
	case <-t.C:
	}
	return op(ctx)
}

// Querier is what CheckPrimary needs of a pool or connection.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// CheckPrimary reports whether db reaches a primary: nil when the server
// answers and accepts writes, ErrReadOnly when it is a standby, or the
// error of the round trip. A ping alone would call a service ready while
// its only address leads to a demoted node.
func CheckPrimary(ctx context.Context, db Querier) error {
	var standby bool
	if err := db.QueryRowContext(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return fmt.Errorf("check primary: %w", err)
	}
	if standby {
		return ErrReadOnly
	}
	return nil
}
