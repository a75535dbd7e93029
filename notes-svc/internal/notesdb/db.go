// Package notesdb stores notes, accounts, API keys and idempotency records
// in PostgreSQL, and owns the embedded schema migrations.
//
// Notes and idempotency records go through GORM on a pgx pool, with
// database/sql over it (pkg/postgres.Pool), in one session with prepared
// statements (pgx's statement cache prepares each statement once per
// connection and then executes it by name) and no implicit transactions:
// the gorm tags of notes.Note are the one mapping of a note
// to its row, and every statement, listings included, is built from them,
// so a field of the model is read, inserted, updated and replayed without
// a column list here to keep. A note's tags, a text[], cross with pgx's
// array codec (the textarray serializer, pgArray). SQL is written only
// where GORM has no form: the keyed tag and full-text conditions, keyset
// conditions, LIMIT and OFFSET as parameters, the advisory lock and the
// batched expiry of idempotency records; each says so. Accounts and API
// keys are pkg/keystore's, on the same GORM session as marketdata-svc's;
// the last-use times of keys are flushed in one statement per batch.
//
// The two hot statements, a note read by id (noteOf) and a note inserted,
// are built by GORM from the model once, at New (hot.go), and replayed
// with each call's arguments. The insert goes through Exec. The read runs
// on the pool GORM runs on, through pgx itself, straight into the model's
// fields, without database/sql (whose hold of a connection, taken through
// its own pool's lock, cost 2.5 µs of a read's 60 µs of CPU: notes_get
// at 17,054 against 16,504 req/s, medians of three interleaved 6 s runs) or GORM's
// Connection (whose session costs 10 allocations and 1.6 KiB a call):
// a profile of make bench's notes_get showed GORM's Raw and Rows,
// database/sql's Rows (a cancellation goroutine a query) and pgx's stdlib
// adapter (value converters built for every result, each column converted
// twice) as the largest cost the minimal pgx server does not pay. On a
// real PostgreSQL (BenchmarkGetNote; times are the round trip on a busy
// shared VM, within noise):
//
//	                 GORM per call   built once,      built once,      built once, pgx,
//	                                 Raw + Rows       read through pgx on the pool
//	GetNote          137 allocs/op   80 allocs/op     35 allocs/op     27 allocs/op
//	                 9.3 KiB/op      5.0 KiB/op       3.3 KiB/op       1.9 KiB/op
//	CreateNote       71 allocs/op    61 allocs/op (Exec)
//
// and make bench's notes_get (BENCH_WORKLOADS=notes_get, 5 rounds each,
// run back to back on the same loaded machine, load average about 20):
// 0.65 of the minimal pgx server with Raw + Rows (rounds 0.62-0.77), 0.79
// read through pgx (rounds 0.63-0.91).
//
// Every change to a note writes its event (events.go) in the change's
// transaction. A create without an Idempotency-Key is the hottest write,
// so its note and event are one statement (createSQL: the note insert and
// the event insert GORM built at New, joined by a data-modifying WITH),
// atomic without a transaction of its own: one round trip, as before the
// event log. BenchmarkCreateNote, back to back with the code before the event
// log on the same loaded machine (load average about 10; times within
// noise of each other's spread):
//
//	                 note only        note + event,      note + event,
//	                 (before)         GORM tx, 2 stmts   one statement
//	CreateNote       61 allocs/op     213 allocs/op      91 allocs/op
//	                 6.0 KiB/op       20 KiB/op          14 KiB/op
//	                 0.7-1.3 ms/op    2.2-7.5 ms/op      1.3-1.6 ms/op
//
// The 30 allocations left are the note's JSON for the event (the API's
// encoder) and the event's id. Since database/sql takes each connection
// from the pgx pool for the call and gives it back, it makes its wrapper
// of the connection anew every time: CreateNote is 102 allocations and
// 15.5 KiB, at the same speed (notes_post 1.00x of the minimal server).
//
// Every single-note query is scoped by noteOf (account_id = ? AND id =
// ?), every listing and count by the account in noteFilter, so that one
// account can never reach another's rows, and every driver error leaves
// the package translated into a notes domain error.
package notesdb

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// PoolOptions bound the connection pool and each statement; they are
// pkg/postgres's, so both services open their pools the same way.
type PoolOptions = postgres.PoolOptions

// Open returns the connection pool of the PostgreSQL database at dsn: a
// pgx pool, which the note read runs on, and database/sql on it for GORM,
// goose and the other stores of the notes database (pkg/postgres.Pool).
// It does not connect: the first query or Ping does.
func Open(dsn string, o PoolOptions) (*postgres.Pool, error) {
	if o.ApplicationName == "" {
		o.ApplicationName = "notes-svc"
	}
	pool, err := postgres.OpenPool(dsn, o, func(cfg *pgxpool.Config) {
		params := cfg.ConnConfig.RuntimeParams
		// Every statement names one account and has one good plan
		// whatever the values: the account's index, or the
		// account-qualified GIN keys of a filter. Left to choose,
		// PostgreSQL re-plans a tag filter on every execution once the
		// table is large (a parameter's selectivity on the keys is
		// unknown, so the generic plan looks dear), which cost more than
		// the scan itself: 3.2 ms against 1.3 ms per count and page at
		// 5,000 accounts, 1.2 ms with the generic plan (bench
		// tenant_scale).
		if _, ok := params["plan_cache_mode"]; !ok {
			params["plan_cache_mode"] = "force_generic_plan"
		}
		// No statement reads more than one account's notes, so none
		// gains from parallel workers, and a generic plan, which cannot
		// see how few notes a keyed posting list holds, can cost a
		// filtered listing high enough to start two: 65-100 ms of worker
		// start-up for 0.2 ms of work on 1M notes (bench tenant_scale).
		if _, ok := params["max_parallel_workers_per_gather"]; !ok {
			params["max_parallel_workers_per_gather"] = "0"
		}
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return pool, nil
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
	pool  *postgres.Pool
	batch ListBatch
	// notes is the parsed model of notes.Note, and noteColumns its
	// columns, which a write returns.
	notes       *schema.Schema
	noteColumns []clause.Column
	// readFields are the model's columns in the order readNote reads
	// them, and getNoteSQL the read of one note by noteOf, built once.
	readFields []*schema.Field
	getNoteSQL string
	// insertNoteSQL is the insert of a note, built once, binding the
	// values of insertFields.
	insertNoteSQL string
	insertFields  []*schema.Field
	// object writes a note into its events, and now dates them.
	object func(notes.Note) json.RawMessage
	now    func() time.Time
	// insertEventSQL is the insert of an event, built once; createSQL
	// inserts a note and its note.created event in one statement.
	insertEventSQL string
	createSQL      string
}

// New returns a Store on db, which the caller keeps and closes.
func New(db *postgres.Pool) (*Store, error) {
	g, err := postgres.OpenGORM(db.DB)
	if err != nil {
		return nil, err
	}
	// GORM finds serializers by name in its own registry; registering
	// again only replaces it with its equal.
	schema.RegisterSerializer("textarray", newTextArraySerializer())
	// A select names the model's columns, never the search vector, which
	// no answer needs. Every statement is prepared once per connection
	// and then executed by name: pgx's statement cache does it
	// (QueryExecModeCacheStatement, its default), on the pool's own
	// connections, which outlive database/sql's hold of them. GORM's
	// PrepareStmt would prepare through database/sql instead, whose
	// statements die with its hold: a DEALLOCATE and a new PREPARE for
	// every call, since database/sql keeps no idle connection of the pool.
	notesDB := g.Session(&gorm.Session{QueryFields: true})
	stmt := &gorm.Statement{DB: notesDB}
	if err := stmt.Parse(&notes.Note{}); err != nil {
		return nil, fmt.Errorf("parse note model: %w", err)
	}
	s := &Store{Store: keystore.New(g, KeyConfig()), db: notesDB, pool: db, batch: DefaultListBatch, notes: stmt.Schema, now: time.Now}
	for _, name := range stmt.Schema.DBNames {
		s.noteColumns = append(s.noteColumns, clause.Column{Name: name})
	}
	if s.readFields, err = noteFields(stmt.Schema); err != nil {
		return nil, err
	}
	s.getNoteSQL, err = s.statement(func(db *gorm.DB) *gorm.DB {
		return db.Select(stmt.Schema.DBNames).Scopes(noteOf("", "")).Find(&notes.Note{})
	})
	if err != nil {
		return nil, fmt.Errorf("build note read: %w", err)
	}
	if s.insertNoteSQL, s.insertFields, err = s.insertShape(); err != nil {
		return nil, fmt.Errorf("build note insert: %w", err)
	}
	if s.insertEventSQL, err = s.eventInsert(); err != nil {
		return nil, fmt.Errorf("build event insert: %w", err)
	}
	// A data-modifying WITH runs its insert whether or not the outer
	// statement reads it: the note and its event, one statement, one
	// round trip, atomic without a transaction of its own.
	s.createSQL = "WITH note AS (" + s.insertNoteSQL + ") " + s.insertEventSQL
	return s, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.PGX.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", translate(err))
	}
	return nil
}

// Translate is translate for the other stores on the notes database
// (webhookdb), which share its classes of failure.
func Translate(err error) error { return translate(err) }

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
