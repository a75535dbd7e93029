// Package testenv gives integration tests a real PostgreSQL server with the
// notes schema and River's (as `notes-svc migrate` applies them): each test gets its own database, cloned from a template
// that is migrated once per test binary.
//
// The server is NOTES_TEST_DATABASE_URL when set (an admin URL, usually to
// the "postgres" database), else a container started with testcontainers
// when a Docker engine answers; otherwise the tests fail loudly.
//
// Nothing starts until a test first asks for a database, so a package's
// tests that need none run without Docker. Under go test -short every test
// that asks for one is skipped instead, so that a newcomer's first
// `go test -short ./...` needs neither; without -short a missing server
// fails the test, never skips it, so that CI cannot pass vacuously.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/delivery"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// env is the per-binary state, set up by the first test that needs a
// database and torn down by Main.
var env struct {
	once     sync.Once
	err      error
	stop     func()
	mu       sync.Mutex
	adminURL *url.URL // its path names the database
	template string
	admin    *sql.DB
}

// Main runs the tests and tears down whatever they set up. Use it as
// os.Exit(testenv.Main(m)) in TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	teardown(context.Background())
	return code
}

// start finds the server and migrates the template database, once per
// test binary; a failure is kept and reported to every test that asks.
func start() error {
	env.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		adminURL, source, stop, err := server(ctx)
		if err != nil {
			env.err = fmt.Errorf("testenv: %w", err)
			return
		}
		env.stop = stop
		fmt.Fprintf(os.Stderr, "testenv: postgres via %s\n", source)
		if err := setup(ctx, adminURL); err != nil {
			env.err = fmt.Errorf("testenv: %w", err)
		}
	})
	return env.err
}

func server(ctx context.Context) (adminURL, source string, stop func(), err error) {
	if u := os.Getenv("NOTES_TEST_DATABASE_URL"); u != "" {
		return u, "NOTES_TEST_DATABASE_URL", func() {}, nil
	}
	if err := dockerHealthy(ctx); err != nil {
		return "", "", nil, fmt.Errorf("no PostgreSQL for tests: NOTES_TEST_DATABASE_URL is not set and no Docker engine answers (%v); run `make test` or set NOTES_TEST_DATABASE_URL to an admin URL", err)
	}
	image := os.Getenv("TICKERDESK_TEST_POSTGRES_IMAGE")
	if image == "" {
		image = "tickerdesk/test-postgres:15"
	}
	ctr, err := tcpostgres.Run(ctx, image,
		tcpostgres.WithDatabase("postgres"), tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies())
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return "", "", nil, fmt.Errorf("start postgres container %s: %w", image, err)
	}
	u, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return "", "", nil, fmt.Errorf("postgres container url: %w", err)
	}
	return u, "testcontainers (" + image + ")", func() { _ = testcontainers.TerminateContainer(ctr) }, nil
}

func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.Health(hctx)
}

func setup(ctx context.Context, adminURL string) error {
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return fmt.Errorf("open admin db: %w", err)
	}
	admin.SetMaxOpenConns(2)
	env.admin = admin
	if env.adminURL, err = url.Parse(adminURL); err != nil {
		return fmt.Errorf("admin url: %w", err)
	}
	env.template = "tpl_notes_" + randomSuffix()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+env.template); err != nil {
		return fmt.Errorf("create template db: %w", err)
	}
	db, err := notesdb.Open(databaseURL(env.template), notesdb.PoolOptions{MaxOpenConns: 2})
	if err != nil {
		return err
	}
	defer db.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := notesdb.Migrate(ctx, db.DB, quiet); err != nil {
		return fmt.Errorf("migrate template db: %w", err)
	}
	if err := delivery.Migrate(ctx, db.DB, quiet); err != nil {
		return fmt.Errorf("migrate template db: %w", err)
	}
	return nil
}

func teardown(ctx context.Context) {
	if env.admin != nil {
		_, _ = env.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+env.template+" WITH (FORCE)")
		_ = env.admin.Close()
	}
	if env.stop != nil {
		env.stop()
	}
}

// DatabaseURL creates a fresh, migrated database for t, drops it when t
// ends, and returns its URL. The first call starts the server; under
// -short it skips t instead.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: needs PostgreSQL; skipped under -short")
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	name := "t_notes_" + randomSuffix()
	// CREATE DATABASE ... TEMPLATE needs the template to be idle; one copy
	// at a time keeps it so.
	env.mu.Lock()
	_, err := env.admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + env.template)
	env.mu.Unlock()
	if err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := env.admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database %s: %v", name, err)
		}
	})
	return databaseURL(name)
}

// DB opens a pool on a fresh database (see DatabaseURL), closed when t ends.
func DB(t testing.TB) *postgres.Pool {
	t.Helper()
	return DBWith(t, notesdb.PoolOptions{MaxOpenConns: 10, StatementTimeout: 30 * time.Second})
}

// DBWith is DB with the pool options o, such as a Tracer.
func DBWith(t testing.TB, o notesdb.PoolOptions) *postgres.Pool {
	t.Helper()
	db, err := notesdb.Open(DatabaseURL(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// OtherSession begins a transaction on a connection of its own to the
// database at url, rolled back and closed when t ends: another client
// holding locks while the code under test works.
func OtherSession(t testing.TB, url string) *sql.Tx {
	t.Helper()
	db, err := notesdb.Open(url, notesdb.PoolOptions{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// databaseURL is the URL of the database called name on the server.
func databaseURL(name string) string {
	u := *env.adminURL
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
