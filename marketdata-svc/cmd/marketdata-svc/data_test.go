package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tickerdesk/tickerdesk/pkg/auth"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The data commands end to end through run: migrate, keys, import, demo
// and generate, with the data version published to Redis.
func TestDataCommands(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{
		"MARKETDATA_DATABASE_URL": testenv.Postgres(t),
		"MARKETDATA_REDIS_URL":    testenv.Redis(t),
	}
	getenv := func(k string) string { return env[k] }
	cmd := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, getenv, &out); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	cmd("migrate")
	out := cmd("keys", "create", "--account", "acme", "--rate-per-second", "3", "--scopes", "eod,tickers", "--expires-in", "1h")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	hash, err := auth.Parse(auth.MarketDataPrefix, key)
	if err != nil {
		t.Fatalf("last line %q is not a key: %v", key, err)
	}
	store, err := marketdatadb.Open(ctx, config.Config{DatabaseURL: env["MARKETDATA_DATABASE_URL"], DBMaxOpenConns: 2, DBMaxIdleConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, err := store.LookupKey(ctx, hash)
	if err != nil || p.RatePerSecond != 3 || len(p.Scopes) != 2 || p.ExpiresAt.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("created key: %+v %v", p, err)
	}
	if list := cmd("keys", "list"); !strings.Contains(list, p.KeyID) || !strings.Contains(list, auth.Hint(key)) || strings.Contains(list, key) {
		t.Fatalf("keys list:\n%s", list)
	}
	cmd("keys", "revoke", p.KeyID)
	if p, _ = store.LookupKey(ctx, hash); !p.Revoked {
		t.Fatal("key not revoked")
	}
	var out2 bytes.Buffer
	if err := run(ctx, []string{"keys", "create"}, getenv, &out2); err == nil {
		t.Fatal("keys create without --account succeeded")
	}

	out = cmd("import", "--symbol", "GOOG", "../../internal/demo/data/goog-2004-2008.csv")
	if !strings.Contains(out, "1047 prices rows (yahoo layout)") || !strings.Contains(out, "rows/s") {
		t.Fatalf("import output:\n%s", out)
	}
	v, err := store.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rdbOpts, _ := redis.ParseURL(env["MARKETDATA_REDIS_URL"])
	rdb := redis.NewClient(rdbOpts)
	defer rdb.Close()
	if got, err := rdb.Get(ctx, dataversion.Key).Result(); err != nil || got != strconv.FormatInt(v, 10) {
		t.Fatalf("redis data version %q (%v), want %d", got, err, v)
	}
	if out = cmd("demo"); !strings.Contains(out, "data version") {
		t.Fatalf("demo output:\n%s", out)
	}
	if out = cmd("demo"); !strings.Contains(out, "no changes") {
		t.Fatalf("second demo changed data:\n%s", out)
	}
	if out = cmd("generate", "--symbols", "3", "--years", "1", "--seed", "9"); !strings.Contains(out, "loaded 783 bars of 3 synthetic symbols") {
		t.Fatalf("generate output:\n%s", out)
	}
	v2, _ := store.DataVersion(ctx)
	if got, _ := rdb.Get(ctx, dataversion.Key).Result(); got != strconv.FormatInt(v2, 10) || v2 <= v {
		t.Fatalf("redis data version %q after generate, store %d", got, v2)
	}
	dir := t.TempDir()
	if out = cmd("generate", "--symbols", "2", "--years", "1", "--out", dir); !strings.Contains(out, "wrote 522 price rows") {
		t.Fatalf("generate --out output:\n%s", out)
	}
}
