package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://u:p@db/marketdata"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8081" || c.CacheTimeout != 50*time.Millisecond || c.KeyCacheTTL != 30*time.Second || c.TrustedProxies != nil {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	_, err := Load(env(map[string]string{
		"MARKETDATA_KEY_CACHE_TTL":     "2m",
		"MARKETDATA_CACHE_TTL":         "soon",
		"MARKETDATA_DB_MAX_OPEN_CONNS": "many",
		"MARKETDATA_LOG_LEVEL":         "loud",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"MARKETDATA_DATABASE_URL", "MARKETDATA_KEY_CACHE_TTL", "MARKETDATA_CACHE_TTL", "MARKETDATA_DB_MAX_OPEN_CONNS", "MARKETDATA_LOG_LEVEL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestLoadRateLimitMode(t *testing.T) {
	for v, want := range map[string]string{"": RateLimitLease, "lease": RateLimitLease, " exact ": RateLimitExact} {
		c, err := Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m", "MARKETDATA_RATELIMIT_MODE": v}))
		if err != nil || c.RateLimitMode != want {
			t.Errorf("MARKETDATA_RATELIMIT_MODE=%q: %q, %v; want %q", v, c.RateLimitMode, err, want)
		}
	}
	_, err := Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m", "MARKETDATA_RATELIMIT_MODE": "loose"}))
	if err == nil || !strings.Contains(err.Error(), "MARKETDATA_RATELIMIT_MODE") {
		t.Errorf("mode loose: %v, want an error naming the setting", err)
	}
}

func TestLoadTrustedProxies(t *testing.T) {
	c, err := Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m", "MARKETDATA_TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.1 ,"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.TrustedProxies, "|") != "10.0.0.0/8|192.168.1.1" {
		t.Fatalf("TrustedProxies = %q", c.TrustedProxies)
	}
}

func TestLogValueMasksSecrets(t *testing.T) {
	c, err := Load(env(map[string]string{
		"MARKETDATA_DATABASE_URL":    "postgres://app:db-s3cret@db:5432/marketdata?sslmode=require",
		"MARKETDATA_REDIS_URL":       "redis://:redis-s3cret@cache:6379/0",
		"OTEL_TRACES_EXPORTER":       "otlp",
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer hdr-s3cret",
		// Every other secret marketdata-svc reads.
		"MARKETDATA_DATABASE_REPLICA_URLS":  "postgres://app:replica-s3cret@replica:5432/marketdata",
		"MARKETDATA_SYNC_MARKETSTACK_TOKEN": "ms-s3cret",
		"MARKETDATA_SYNC_TIINGO_TOKEN":      "ti-s3cret",
		"MARKETDATA_SYNC_EODHD_TOKEN":       "eo-s3cret",
		"MARKETDATA_SYNC_STOOQ_TOKEN":       "st-s3cret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", c)
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Fatalf("logged configuration holds a password: %s", out)
	}
	// The tracing settings are logged as envconfig.Service words them (tested
	// there), never with the OTLP headers.
	if !strings.Contains(out, "db:5432/marketdata") || !strings.Contains(out, `"shutdown_drain":"5s"`) ||
		!strings.Contains(out, `"tracing":{"enabled":true,"exporter":"otlp"}`) || !strings.Contains(out, `"sync_tiingo_token":"xxxxx"`) ||
		!strings.Contains(out, `"cache_ttl":"5m0s"`) || !strings.Contains(out, "replica:5432/marketdata") {
		t.Fatalf("logged configuration lost its content: %s", out)
	}
}

func TestLoadCORSOrigins(t *testing.T) {
	load := func(origins string) (Config, error) {
		return Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m", "MARKETDATA_CORS_ORIGINS": origins}))
	}
	c, err := load(" https://app.example.com, http://localhost:3000 ,* ")
	if err != nil || len(c.CORSOrigins) != 3 || c.CORSOrigins[0] != "https://app.example.com" || c.CORSOrigins[2] != "*" {
		t.Fatalf("origins %q, %v", c.CORSOrigins, err)
	}
	if c, err := load(""); err != nil || len(c.CORSOrigins) != 0 {
		t.Fatalf("empty list gave %q, %v", c.CORSOrigins, err)
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/", "ftp://x.example", "https://u:p@x.example", "https://x.example/path", "https://x.example?q"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "MARKETDATA_CORS_ORIGINS") {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}

func TestLoadReplicaURLs(t *testing.T) {
	c, err := Load(env(map[string]string{
		"MARKETDATA_DATABASE_URL":          "postgres://app:p@primary/m",
		"MARKETDATA_DATABASE_REPLICA_URLS": " postgres://app:r1-s3cret@replica-1/m, postgres://app:r2-s3cret@replica-2/m ,",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.DatabaseReplicaURLs) != 2 || c.DatabaseReplicaURLs[1] != "postgres://app:r2-s3cret@replica-2/m" || c.ReplicaWait != 10*time.Second {
		t.Fatalf("replicas %q, wait %s", c.DatabaseReplicaURLs, c.ReplicaWait)
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", c)
	if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "replica-2/m") {
		t.Fatalf("logged replica URLs: %s", out)
	}
	if _, err := Load(env(map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m", "MARKETDATA_DATABASE_REPLICA_WAIT": "0s"})); err == nil ||
		!strings.Contains(err.Error(), "MARKETDATA_DATABASE_REPLICA_WAIT") {
		t.Errorf("a zero replica wait accepted (%v)", err)
	}
	if c.ReplicaReadTimeout != time.Second {
		t.Errorf("replica read timeout %s by default, want 1s", c.ReplicaReadTimeout)
	}
	for _, tc := range []struct {
		env  map[string]string
		want time.Duration // 0: refused
	}{
		{map[string]string{"MARKETDATA_DATABASE_REPLICA_READ_TIMEOUT": "250ms"}, 250 * time.Millisecond},
		{map[string]string{"MARKETDATA_REQUEST_TIMEOUT": "1s"}, 500 * time.Millisecond},
		{map[string]string{"MARKETDATA_DATABASE_REPLICA_READ_TIMEOUT": "6s"}, 0},
		{map[string]string{"MARKETDATA_DATABASE_REPLICA_READ_TIMEOUT": "1ms"}, 0},
	} {
		tc.env["MARKETDATA_DATABASE_URL"] = "postgres://db/m"
		c, err := Load(env(tc.env))
		switch {
		case tc.want == 0 && (err == nil || !strings.Contains(err.Error(), "MARKETDATA_DATABASE_REPLICA_READ_TIMEOUT")):
			t.Errorf("%v accepted (%v)", tc.env, err)
		case tc.want != 0 && (err != nil || c.ReplicaReadTimeout != tc.want):
			t.Errorf("%v: %s, %v; want %s", tc.env, c.ReplicaReadTimeout, err, tc.want)
		}
	}
}

func TestLoadRedisModes(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(env(base("MARKETDATA_REDIS_CLUSTER_ADDRS", "r1:6379, r2:6379", "MARKETDATA_REDIS_PASSWORD", "s3cret")))
	if err != nil || len(c.RedisClusterAddrs) != 2 || !c.RedisConfigured() {
		t.Fatalf("cluster: %+v, %v", c.RedisClusterAddrs, err)
	}
	c, err = Load(env(base("MARKETDATA_REDIS_SENTINEL_ADDRS", "s1:26379", "MARKETDATA_REDIS_SENTINEL_MASTER", "mymaster",
		"MARKETDATA_REDIS_SENTINEL_PASSWORD", "s3cret")))
	if err != nil || c.RedisSentinelMaster != "mymaster" || !c.RedisConfigured() {
		t.Fatalf("sentinel: %+v, %v", c, err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "config", c)
	if strings.Contains(logged.String(), "s3cret") || !strings.Contains(logged.String(), "redis_sentinel_master=mymaster") {
		t.Errorf("logged config: %s", logged.String())
	}
	if c, _ := Load(env(base())); c.RedisConfigured() {
		t.Error("no Redis setting, yet RedisConfigured")
	}
	for _, bad := range []map[string]string{
		base("MARKETDATA_REDIS_URL", "redis://r:6379/0", "MARKETDATA_REDIS_CLUSTER_ADDRS", "r1:6379"),
		base("MARKETDATA_REDIS_SENTINEL_ADDRS", "s1:26379"),
		base("MARKETDATA_REDIS_SENTINEL_MASTER", "mymaster"),
		base("MARKETDATA_REDIS_CLUSTER_ADDRS", "r1"),
		base("MARKETDATA_REDIS_URL", "redis://r:6379/0", "MARKETDATA_REDIS_PASSWORD", "p"),
	} {
		if _, err := Load(env(bad)); err == nil || !strings.Contains(err.Error(), "MARKETDATA_REDIS_") {
			t.Errorf("%v: %v, want an error naming the Redis setting", bad, err)
		}
	}
}
