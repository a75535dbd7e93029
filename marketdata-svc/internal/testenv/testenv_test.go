package testenv_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPostgresGivesMigratedIsolatedDatabases(t *testing.T) {
	a, b := testenv.Postgres(t), testenv.Postgres(t)
	if a == b {
		t.Fatal("two calls returned the same database")
	}
	db, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow("SELECT version FROM data_version").Scan(&v); err != nil {
		t.Fatalf("migrated schema missing: %v", err)
	}
	if _, err := db.Exec("INSERT INTO exchanges (mic, name) VALUES ('XTST', 'Test')"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var n int
	if err := other.QueryRow("SELECT count(*) FROM exchanges").Scan(&n); err != nil || n != 0 {
		t.Fatalf("second database not isolated: n=%d err=%v", n, err)
	}
}

func TestRedisProxyCutsAndRestores(t *testing.T) {
	p := testenv.RedisProxy(t)
	opts, err := redis.ParseURL(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1
	opts.DialTimeout = time.Second
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatal("GET through a stopped proxy succeeded")
	}
	p.Start()
	got, err := c.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("after restart: %q, %v", got, err)
	}
	// Two leases never share a database.
	if first, second := testenv.Redis(t), testenv.Redis(t); first == second {
		t.Fatal("two leases returned the same database")
	}
}
