// Package marketdatadb is marketdata-svc's PostgreSQL database of record:
// exchanges, tickers, raw end-of-day and 1-minute bars with their
// adjustment factors, splits, dividends and API keys. It opens the pool,
// owns the embedded goose migrations, translates driver errors into the
// domain's, and keeps what every part of the service shares: the data
// version, the API keys (auth.KeyStore) and the usage counters.
//
// The market data itself is read and written by the packages below it,
// each on the pool Store.DB returns:
//
//   - reads: the API's queries (marketdata.Store and IntradayStore);
//   - ingest: the bulk loads that import, sync, the demo and the
//     generator share, at COPY speed;
//   - replicas: a decorator that routes the reads to streaming replicas
//     of the primary, each with a pool of its own, when the service has
//     any.
//
// Every statement on market data is hand-written SQL on one pgx connection
// pool: the reads are a few fixed queries where an ORM's reflection would
// cost more than the query, and the writes are bulk COPY and set-based
// upserts that an ORM does not express. Accounts and API keys, which are
// cold or cached, are pkg/keystore's, the same store as notes-svc's,
// through a GORM session on that pool.
package marketdatadb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
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

// Store is the database: its pool, with the data version, the usage
// counters and, in the embedded keystore.Store, the accounts and API keys
// (through GORM on the same pool, as in notes-svc). It is safe for
// concurrent use.
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

// OpenReplica returns a store on the database at rawURL with cfg's pool
// limits and session timeouts, without connecting: a replica down at start
// is skipped until it answers (package replicas).
func OpenReplica(cfg config.Config, rawURL string, tracer pgx.QueryTracer) (*Store, error) {
	return openPool(cfg, rawURL, tracer)
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

// DB returns the underlying connection pool: the reads and the ingest
// run on it, metrics collectors read its sql.DBStats.
func (s *Store) DB() *sql.DB { return s.db }

// Addr is the host:port of the database, for logs.
func (s *Store) Addr() string {
	return net.JoinHostPort(s.connCfg.Host, strconv.Itoa(int(s.connCfg.Port)))
}

// DataVersion returns the current data version, which every load that
// changes data bumps in its transaction.
func (s *Store) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM data_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("data version: %w", Translate(err))
	}
	return v, nil
}

// Ping checks that the database answers and is the primary.
func (s *Store) Ping(ctx context.Context) error {
	// A demoted node answers a ping; readiness needs the primary.
	if err := postgres.CheckPrimary(ctx, s.db); err != nil {
		return fmt.Errorf("ping database: %w", Translate(err))
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
		return fmt.Errorf("migrate: %w", Translate(err))
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
		return 0, 0, fmt.Errorf("migration status: %w", Translate(err))
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

// Translate maps driver errors to domain errors, classified by
// pkg/postgres as in notes-svc: a database too slow to answer becomes
// marketdata.ErrTimeout, one that cannot be reached or kept
// marketdata.ErrUnavailable (each wrapped with the cause); the rest is
// returned as is for the caller to wrap. The reads, the ingest and the
// replica router translate through it too.
func Translate(err error) error {
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

// The database keeps the API keys.
var _ auth.KeyStore = (*Store)(nil)
