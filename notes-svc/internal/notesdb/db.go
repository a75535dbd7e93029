// Package notesdb stores notes, accounts, API keys and idempotency records
// in PostgreSQL, and owns the embedded schema migrations.
//
// There is one path per job. Every statement on the notes table (and the
// idempotency record written with a note) is written by hand and runs on
// pgx under database/sql (Store.withConn): notes are the hot path, and pgx
// encodes and decodes text[] and timestamps natively, with its
// per-connection statement cache preparing each statement once. They
// share one column list (noteColumns), one row mapping (noteDest and
// tidyNote), one insert (insertNote, with or without an Idempotency-Key)
// and one filter (noteFilter, for listings and counts). Accounts and API
// keys, which are cold or cached, are pkg/keystore's, on the same GORM
// session as marketdata-svc's; the last-use times of keys are flushed in
// one statement per batch.
//
// The text[] of a key's scopes crosses database/sql, where pgx hands it
// over in its text form: textArray parses it with pgx's own
// pgtype.Map.SQLScanner, a fresh Map per scan (2.3 µs for two scopes,
// against 2.5 µs through one shared Map behind a lock), since neither
// pgtype.FlatArray nor pgtype.Array is a sql.Scanner. Its encoder stays
// hand-written: GORM expands a plain slice argument into a parameter list,
// so it needs a driver.Valuer, and pgx's encoder through a Map takes 4.2
// µs where the hand-written one takes 0.14 µs.
//
// Every note query is scoped with account_id = $1 AND ... so that one
// account can never reach another's rows, and every driver error leaves
// the package translated into a notes domain error.
package notesdb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/gorm"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// PoolOptions bound the connection pool and each statement; they are
// pkg/postgres's, so both services open their pools the same way.
type PoolOptions = postgres.PoolOptions

// Open returns a connection pool for the PostgreSQL database at dsn. It
// does not connect: the first query or Ping does.
func Open(dsn string, o PoolOptions) (*sql.DB, error) {
	if o.ApplicationName == "" {
		o.ApplicationName = "notes-svc"
	}
	cfg, err := postgres.ParseConfig(dsn, o)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Every statement names one account and has one good plan whatever
	// the values: the account's index, or the account-qualified GIN keys
	// of a filter. Left to choose, PostgreSQL re-plans a tag filter on
	// every execution once the table is large (a parameter's selectivity
	// on the keys is unknown, so the generic plan looks dear), which cost
	// more than the scan itself: 3.2 ms against 1.3 ms per count and page
	// at 5,000 accounts, 1.2 ms with the generic plan (bench tenant_scale).
	if _, ok := cfg.RuntimeParams["plan_cache_mode"]; !ok {
		cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	// No statement reads more than one account's notes, so none gains
	// from parallel workers, and a generic plan, which cannot see how few
	// notes a keyed posting list holds, can cost a filtered listing high
	// enough to start two: 65-100 ms of worker start-up for 0.2 ms of
	// work on 1M notes (bench tenant_scale).
	if _, ok := cfg.RuntimeParams["max_parallel_workers_per_gather"]; !ok {
		cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	}
	return postgres.Open(cfg, o), nil
}

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies every pending migration. A PostgreSQL session lock makes
// concurrent runs (several replicas starting at once) wait for each other.
func Migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, mustSub(migrations, "migrations"), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// p.Close would close db, which belongs to the caller.
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", translate(err))
	}
	for _, r := range results {
		log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration_ms", r.Duration.Milliseconds())
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", translate(err))
	}
	log.Info("schema up to date", "version", v, "applied", len(results))
	return nil
}

// Store implements notes.Store on PostgreSQL, and through the embedded
// keystore.Store (accounts and API keys) auth.KeyStore.
type Store struct {
	*keystore.Store
	db    *gorm.DB
	sql   *sql.DB
	batch ListBatch
}

// New returns a Store on db, which the caller keeps and closes.
func New(db *sql.DB) (*Store, error) {
	g, err := postgres.OpenGORM(db)
	if err != nil {
		return nil, err
	}
	return &Store{Store: keystore.New(g, KeyConfig()), db: g, sql: db, batch: DefaultListBatch}, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.sql.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", translate(err))
	}
	return nil
}

// translate maps driver errors to notes domain errors (classified by
// pkg/postgres, as in marketdata-svc), keeping the original in the chain
// for the log.
func translate(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return notes.ErrNotFound
	}
	switch postgres.Classify(err) {
	case postgres.NoRows:
		return notes.ErrNotFound
	case postgres.Timeout:
		return fmt.Errorf("%w: %w", notes.ErrTimeout, err)
	case postgres.Unavailable:
		return fmt.Errorf("%w: %w", notes.ErrUnavailable, err)
	case postgres.Conflict:
		return fmt.Errorf("%w: %w", notes.ErrConflict, err)
	}
	return err
}
