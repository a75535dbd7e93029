// Package testenv gives integration tests a real PostgreSQL database and a
// real Redis, isolated per test.
//
// The servers are chosen once per test binary:
//  1. MARKETDATA_TEST_DATABASE_URL (an admin URL, usually to the "postgres"
//     database) and MARKETDATA_TEST_REDIS_URL, when set;
//  2. else, when a Docker engine answers, containers started with
//     testcontainers-go from TICKERDESK_TEST_POSTGRES_IMAGE (default
//     tickerdesk/test-postgres:15) and TICKERDESK_TEST_REDIS_IMAGE (default
//     tickerdesk/test-redis:7, both from `make test-images`), one of
//     each per test binary, terminated by Main;
//  3. else the test fails, telling how to provide the servers.
//
// Each Postgres(t) call creates a fresh database from a migrated template
// (CREATE DATABASE ... TEMPLATE is much faster than migrating every time)
// and drops it when the test ends. Each Redis(t) call leases one of Redis's
// numbered databases 1..15 for the test and flushes it before and after.
//
// Store opens the service's stores on such a database (store.go), and
// data.go holds the small datasets the store tests load.
//
// StartReplica adds a real streaming replica of that PostgreSQL
// (pg_basebackup -R), started once per binary by the suites that call it
// (replica.go); the Docker-mode server runs with wal_level=replica for it.
//
// Every package that uses testenv declares
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// so that containers are terminated when the binary exits.
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// Environment variables that select the servers.
const (
	DatabaseURLEnv   = "MARKETDATA_TEST_DATABASE_URL"
	RedisURLEnv      = "MARKETDATA_TEST_REDIS_URL"
	PostgresImageEnv = "TICKERDESK_TEST_POSTGRES_IMAGE"
	RedisImageEnv    = "TICKERDESK_TEST_REDIS_IMAGE"
)

const howto = "run `make test` (it starts a local stack), or set " + DatabaseURLEnv + " and " + RedisURLEnv + ", or start a Docker engine"

var env struct {
	once       sync.Once
	err        error
	adminURL   string // PostgreSQL URL of a database we may connect to for CREATE DATABASE
	redisURL   string
	template   string
	containers []testcontainers.Container
	// postgres is the PostgreSQL container when this binary started one.
	postgres testcontainers.Container
	// cleanups run before the containers are terminated: they stop the
	// replica and the local Redis processes this binary started.
	cleanups []func()
}

// Main runs the package's tests and then terminates any containers this
// binary started.
func Main(m *testing.M) {
	code := m.Run()
	for _, f := range env.cleanups {
		f()
	}
	for _, c := range env.containers {
		if err := testcontainers.TerminateContainer(c); err != nil {
			fmt.Fprintln(os.Stderr, "testenv: terminate container:", err)
		}
	}
	os.Exit(code)
}

func setup() error {
	env.once.Do(func() { env.err = start() })
	return env.err
}

func start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env.adminURL, env.redisURL = os.Getenv(DatabaseURLEnv), os.Getenv(RedisURLEnv)
	switch {
	case env.adminURL != "" && env.redisURL != "":
		fmt.Fprintln(os.Stderr, "testenv: postgres and redis via TEST URL")
	case dockerAvailable(ctx):
		if err := startContainers(ctx); err != nil {
			return fmt.Errorf("testenv: start containers: %w", err)
		}
		fmt.Fprintln(os.Stderr, "testenv: postgres and redis via testcontainers")
	default:
		return errors.New("testenv: no PostgreSQL/Redis for integration tests: " + howto)
	}
	return prepareTemplate(ctx)
}

func dockerAvailable(ctx context.Context) (ok bool) {
	defer func() {
		if recover() != nil { // testcontainers panics on some broken Docker setups
			ok = false
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false
	}
	defer cli.Close()
	_, err = cli.Ping(ctx)
	return err == nil
}

func startContainers(ctx context.Context) error {
	if env.adminURL == "" {
		pg, err := tcpostgres.Run(ctx, imageFromEnv(PostgresImageEnv, "tickerdesk/test-postgres:15"),
			tcpostgres.WithDatabase("postgres"),
			tcpostgres.WithUsername("postgres"),
			tcpostgres.WithPassword("postgres"),
			tcpostgres.BasicWaitStrategies(),
			// Ready for a streaming replica (StartReplica): WAL for
			// replication, kept for a replica stopped for a while, and
			// the replica's port inside this container.
			testcontainers.WithCmdArgs("-c", "wal_level=replica", "-c", "max_wal_senders=4", "-c", "wal_keep_size=256MB"),
			testcontainers.WithExposedPorts(replicaPort+"/tcp"),
		)
		if pg != nil {
			env.containers = append(env.containers, pg)
			env.postgres = pg
		}
		if err != nil {
			return err
		}
		if env.adminURL, err = pg.ConnectionString(ctx, "sslmode=disable"); err != nil {
			return err
		}
	}
	if env.redisURL == "" {
		rc, err := tcredis.Run(ctx, imageFromEnv(RedisImageEnv, "tickerdesk/test-redis:7"))
		if rc != nil {
			env.containers = append(env.containers, rc)
		}
		if err != nil {
			return err
		}
		if env.redisURL, err = rc.ConnectionString(ctx); err != nil {
			return err
		}
	}
	return nil
}

func imageFromEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// prepareTemplate makes sure a migrated template database exists. Its name
// carries a hash of the migrations, so test binaries running in parallel and
// later runs share it, and a changed migration gets a new template.
func prepareTemplate(ctx context.Context) error {
	sum, err := migrationsHash()
	if err != nil {
		return err
	}
	env.template = "tmpl_marketdata_" + sum
	admin, err := sql.Open("pgx", env.adminURL)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer admin.Close()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return fmt.Errorf("testenv: connect to postgres (%s): %w", howto, err)
	}
	defer conn.Close()
	// Serialise template creation across test binaries.
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(727274)"); err != nil {
		return fmt.Errorf("testenv: lock: %w", err)
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock(727274)") //nolint:errcheck // released with the session anyway
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", env.template).Scan(&exists); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if exists {
		return nil
	}
	// Drop templates of older migration sets, then build the new one under
	// a temporary name and rename it, so a crash never leaves a half-migrated
	// template behind under the final name.
	rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'tmpl\\_marketdata\\_%'")
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	var stale []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("testenv: %w", err)
		}
		stale = append(stale, name)
	}
	rows.Close()
	for _, name := range stale {
		_, _ = conn.ExecContext(ctx, "ALTER DATABASE "+quoteIdent(name)+" IS_TEMPLATE false")
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)")
	}
	building := env.template + "_building"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(building)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(building)); err != nil {
		return fmt.Errorf("testenv: create template: %w", err)
	}
	db, err := sql.Open("pgx", withDatabase(env.adminURL, building))
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	err = marketdatadb.Migrate(ctx, db)
	db.Close()
	if err != nil {
		return fmt.Errorf("testenv: migrate template: %w", err)
	}
	for _, q := range []string{
		"ALTER DATABASE " + quoteIdent(building) + " RENAME TO " + quoteIdent(env.template),
		"ALTER DATABASE " + quoteIdent(env.template) + " IS_TEMPLATE true",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("testenv: finish template: %w", err)
		}
	}
	return nil
}

func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(marketdatadb.MigrationsFS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(marketdatadb.MigrationsFS(), path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("testenv: hash migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// require starts the containers on first use. Under -short it skips t
// instead, so that 'go test -short ./...' needs no Docker; without -short a
// failed start fails t, never skips it.
func require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: needs PostgreSQL and Redis containers; skipped under -short")
	}
	if err := setup(); err != nil {
		t.Fatal(err)
	}
}

// Postgres returns the URL of a fresh, migrated database that exists for
// the duration of the test.
func Postgres(t testing.TB) string {
	t.Helper()
	return freshDatabase(t, "t_", "")
}

// EmptyPostgres returns the URL of a fresh database with no migrations
// applied, for tests of migrating itself; it is dropped when the test ends.
func EmptyPostgres(t testing.TB) string {
	t.Helper()
	return freshDatabase(t, "e_", "template0")
}

// freshDatabase creates a database from template (the migrated template
// when empty, known only after setup), named prefix plus random hex, and
// drops it when the test ends.
func freshDatabase(t testing.TB, prefix, template string) string {
	t.Helper()
	require(t)
	if template == "" {
		template = env.template
	}
	name := prefix + randomHex(8)
	admin, err := sql.Open("pgx", env.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name)+" TEMPLATE "+quoteIdent(template)); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", env.adminURL)
		if err != nil {
			t.Errorf("testenv: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + quoteIdent(name) + " WITH (FORCE)"); err != nil {
			t.Errorf("testenv: drop database: %v", err)
		}
	})
	return withDatabase(env.adminURL, name)
}

func withDatabase(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(fmt.Sprintf("testenv: postgres URL does not parse: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
