// Package postgres opens PostgreSQL connection pools and classifies driver
// errors, the same way in both services: a statement timeout, a lost
// connection or a shut-down server must mean the same thing to a client of
// notes-svc as to one of marketdata-svc.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
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
	if o.Tracer != nil {
		cfg.Tracer = o.Tracer
	}
	if o.StatementTimeout > 0 {
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt((2 * o.StatementTimeout).Milliseconds(), 10)
	}
	return cfg, nil
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
	// too many connections (53300) or any connection exception (08xxx).
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
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300":
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
