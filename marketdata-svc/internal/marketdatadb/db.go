// Package marketdatadb is the PostgreSQL store of record of marketdata-svc:
// exchanges, tickers, raw end-of-day bars with their adjustment factors,
// splits, dividends and API keys. It implements marketdata.Store and
// auth.KeyStore, owns the embedded goose migrations, and bulk-loads data at
// COPY speed for the importer and the generator.
//
// Every statement on market data is hand-written SQL on one pgx connection
// pool: the reads are a few fixed queries where an ORM's reflection would
// cost more than the query, and the writes are bulk COPY and set-based
// upserts that an ORM does not express. Accounts and API keys, which are
// cold or cached, are pkg/keystore's, the same store as notes-svc's,
// through a GORM session on that pool.
//
// Replicas (replicas.go) routes the API's reads to streaming replicas of
// the primary, each with a pool of its own, when the service has any.
package marketdatadb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL store. It is safe for concurrent use. The
// embedded keystore.Store keeps accounts and API keys, through GORM on the
// same pool, as in notes-svc.
type Store struct {
	*keystore.Store
	db *sql.DB
	// connCfg is the pool's connection configuration, from which Migrate
	// opens a connection of its own with other session settings.
	connCfg *pgx.ConnConfig
}

// Open connects to cfg.DatabaseURL with the configured pool limits and
// session timeouts (pkg/postgres, shared with notes-svc), and checks the
// connection.
func Open(ctx context.Context, cfg config.Config) (*Store, error) {
	return OpenTraced(ctx, cfg, nil)
}

// OpenTraced is Open with tracer seeing every statement of the pool
// (pkg/tracing's PgxTracer); nil traces nothing.
func OpenTraced(ctx context.Context, cfg config.Config, tracer pgx.QueryTracer) (*Store, error) {
	s, err := openPool(cfg, cfg.DatabaseURL, tracer)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return s, nil
}

// openPool returns a store on the database at rawURL with cfg's pool
// limits and session timeouts, without connecting.
func openPool(cfg config.Config, rawURL string, tracer pgx.QueryTracer) (*Store, error) {
	o := postgres.PoolOptions{
		Tracer:           tracer,
		ApplicationName:  "marketdata-svc",
		MaxOpenConns:     cfg.DBMaxOpenConns,
		MaxIdleConns:     cfg.DBMaxIdleConns,
		ConnMaxLifetime:  cfg.DBConnMaxLifetime,
		ConnMaxIdleTime:  cfg.DBConnMaxIdleTime,
		StatementTimeout: cfg.StatementTimeout,
	}
	connCfg, err := postgres.ParseConfig(rawURL, o)
	if err != nil {
		return nil, err
	}
	db := postgres.Open(connCfg, o)
	g, err := postgres.OpenGORM(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Store{Store: keystore.New(g, KeyConfig()), db: db, connCfg: connCfg}, nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// DB returns the underlying connection pool, for metrics collectors
// (sql.DBStats) and tests.
func (s *Store) DB() *sql.DB { return s.db }

// Ping checks that the database answers and is the primary.
func (s *Store) Ping(ctx context.Context) error {
	// A demoted node answers a ping; readiness needs the primary.
	if err := postgres.CheckPrimary(ctx, s.db); err != nil {
		return fmt.Errorf("ping database: %w", translate(err))
	}
	return nil
}

// MigrationLockTimeout bounds how long one migration statement waits for a
// lock (lock_timeout) before the migration fails, instead of the pool's
// statement timeout, which would cancel a long but healthy rewrite.
const MigrationLockTimeout = time.Minute

// Migrate applies the embedded migrations that are not applied yet. It runs
// on a connection of its own with no statement timeout, since a migration
// may rewrite a big table, and with MigrationLockTimeout instead, so one
// stuck behind another session's lock fails with a clear error rather than
// waiting forever. Every subcommand that migrates (migrate, keys, import,
// demo, generate) comes through here, often beside the migrate Job.
func (s *Store) Migrate(ctx context.Context) error {
	cfg := s.connCfg.Copy()
	cfg.RuntimeParams["statement_timeout"] = "0"
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(MigrationLockTimeout.Milliseconds(), 10)
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	return Migrate(ctx, db)
}

// Migrate applies the embedded migrations to db under goose's PostgreSQL
// session advisory lock, so concurrent runs wait for each other and each
// migration is applied once (without it two runs on a fresh database
// collided on CREATE EXTENSION).
func Migrate(ctx context.Context, db *sql.DB) error {
	// A waiting run retries the lock every second (goose's default is every
	// 5 s) for up to 5 minutes: concurrent starts finish soon after the
	// first, and a run stuck behind a dead one gives up.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	p, err := migrationProvider(db, goose.WithSessionLocker(locker))
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", translate(err))
	}
	return nil
}

// MigrationStatus reports the current and the latest embedded schema version.
func MigrationStatus(ctx context.Context, db *sql.DB) (current, latest int64, err error) {
	p, err := migrationProvider(db)
	if err != nil {
		return 0, 0, err
	}
	if current, err = p.GetDBVersion(ctx); err != nil {
		return 0, 0, fmt.Errorf("migration status: %w", translate(err))
	}
	sources := p.ListSources()
	if len(sources) > 0 {
		latest = sources[len(sources)-1].Version
	}
	return current, latest, nil
}

func migrationProvider(db *sql.DB, opts ...goose.ProviderOption) (*goose.Provider, error) {
	fsys, err := subFS()
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return p, nil
}

// MigrationsFS returns the embedded migration files (test support hashes
// them to name its template database).
func MigrationsFS() embed.FS { return migrations }

func subFS() (fs.FS, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return fsys, nil
}

// translate maps driver errors to domain errors, classified by
// pkg/postgres as in notes-svc: a database too slow to answer becomes
// marketdata.ErrTimeout, one that cannot be reached or kept
// marketdata.ErrUnavailable (each wrapped with the cause); the rest is
// returned as is for the caller to wrap.
func translate(err error) error {
	if errors.Is(err, marketdata.ErrUnavailable) || errors.Is(err, marketdata.ErrTimeout) {
		return err // already translated
	}
	switch postgres.Classify(err) {
	case postgres.Timeout:
		return fmt.Errorf("%w: %w", marketdata.ErrTimeout, err)
	case postgres.Unavailable:
		return fmt.Errorf("%w: %w", marketdata.ErrUnavailable, err)
	}
	return err
}

// dateBound turns an open query bound into a concrete date far outside any
// data, so one prepared statement serves open and closed ranges.
func dateBound(t time.Time, upper bool) time.Time {
	if !t.IsZero() {
		return t
	}
	if upper {
		return time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
}

// The store is both the API's store of record and the key store.
var (
	_ marketdata.Store = (*Store)(nil)
	_ auth.KeyStore    = (*Store)(nil)
)

// Vacuum runs VACUUM (ANALYZE) on the data tables after a bulk load, so that
// the planner has statistics and counts can use index-only scans. It is not
// bound by the statement timeout.
func (s *Store) Vacuum(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("vacuum: %w", translate(err))
	}
	defer conn.Close()
	for _, q := range []string{
		"SET statement_timeout = 0",
		"VACUUM (ANALYZE) eod_bars, splits, dividends, tickers",
		"RESET statement_timeout",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("vacuum: %w", translate(err))
		}
	}
	return nil
}
