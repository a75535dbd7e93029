package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.ShutdownDrain != 5*time.Second || c.TrustedProxies != nil || c.KeyCacheTTL != 30*time.Second || c.LogLevel != slog.LevelInfo {
		t.Errorf("defaults = %+v", c)
	}
	if c.DBMaxOpenConns != 20 || c.GCPercent != 400 {
		t.Errorf("%d open conns, gc percent %d", c.DBMaxOpenConns, c.GCPercent)
	}
	if c.EventRetention != 30*24*time.Hour || c.TrashRetention != 30*24*time.Hour {
		t.Errorf("retentions: events %s, trash %s; want 30 days each", c.EventRetention, c.TrashRetention)
	}
	if c.RequireDatabase() == nil {
		t.Error("RequireDatabase accepted an empty URL")
	}
}

// TestRetentionBounds: a week at least, so that a client away for a long
// weekend can still follow the feed, and a year at most.
func TestRetentionBounds(t *testing.T) {
	for _, name := range []string{"NOTES_EVENT_RETENTION", "NOTES_TRASH_RETENTION"} {
		for v, ok := range map[string]bool{"167h": false, "168h": true, "8760h": true, "8761h": false, "0": false} {
			_, err := Load(env(map[string]string{name: v}))
			if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
	}
}

func TestOverridesAndErrors(t *testing.T) {
	c, err := Load(env(map[string]string{
		"NOTES_DATABASE_URL": "postgres://u:secret@db/notes", "NOTES_HTTP_ADDR": ":9000", "NOTES_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1",
		"NOTES_SHUTDOWN_DRAIN": "0s", "NOTES_LOG_LEVEL": "DEBUG", "NOTES_DB_MAX_OPEN_CONNS": "8",
		"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer hdr-secret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":9000" || len(c.TrustedProxies) != 2 || c.ShutdownDrain != 0 || c.LogLevel != slog.LevelDebug || c.DBMaxOpenConns != 8 {
		t.Errorf("config = %+v", c)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	// The tracing settings are logged as envconfig.Service words them (tested
	// there), never with the OTLP headers.
	if strings.Contains(b.String(), "u:secret@") || strings.Contains(b.String(), "hdr-secret") || !strings.Contains(b.String(), "xxxxx") ||
		!strings.Contains(b.String(), `"tracing":{"enabled":true,"exporter":"otlp"}`) {
		t.Errorf("logged config leaks or lacks the masked password or the tracing settings: %s", b.String())
	}
	_, err = Load(env(map[string]string{
		"NOTES_KEY_CACHE_TTL": "2m", "NOTES_REQUEST_TIMEOUT": "soon", "NOTES_TRUSTED_PROXIES": "nope",
		"NOTES_DATABASE_URL": "mysql://x", "NOTES_LOG_LEVEL": "loud", "NOTES_DB_MAX_OPEN_CONNS": "0",
		"NOTES_GC_PERCENT": "5",
	}))
	for _, name := range []string{"KEY_CACHE_TTL", "REQUEST_TIMEOUT", "TRUSTED_PROXIES", "DATABASE_URL", "LOG_LEVEL", "DB_MAX_OPEN_CONNS", "GC_PERCENT"} {
		if err == nil || !strings.Contains(err.Error(), "NOTES_"+name) {
			t.Errorf("error %v does not name NOTES_%s", err, name)
		}
	}
}

func TestListingBounds(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Defaults: a quarter of the 20-connection pool, two of them per
	// account, one second's wait, batches of 500.
	if c.ListMaxConcurrent != 5 || c.ListMaxPerAccount != 2 || c.ListWait != time.Second || c.ListBatchSize != 500 {
		t.Errorf("listing defaults = %d total, %d per account, wait %s, batch %d", c.ListMaxConcurrent, c.ListMaxPerAccount, c.ListWait, c.ListBatchSize)
	}
	// They follow the pool, and one account never gets every slot.
	for pool, want := range map[string][2]int{"1": {1, 1}, "5": {2, 1}, "8": {2, 1}, "12": {3, 1}, "16": {4, 2}, "100": {25, 2}} {
		c, err := Load(env(map[string]string{"NOTES_DB_MAX_OPEN_CONNS": pool}))
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int{c.ListMaxConcurrent, c.ListMaxPerAccount}; got != want {
			t.Errorf("pool %s: listing bounds %v, want %v", pool, got, want)
		}
	}
	c, err = Load(env(map[string]string{"NOTES_LIST_MAX_CONCURRENT": "3", "NOTES_LIST_MAX_PER_ACCOUNT": "3", "NOTES_LIST_WAIT": "0s", "NOTES_LIST_BATCH_SIZE": "50"}))
	if err != nil || c.ListMaxConcurrent != 3 || c.ListMaxPerAccount != 3 || c.ListWait != 0 || c.ListBatchSize != 50 {
		t.Errorf("overrides: %+v, %v", c, err)
	}
	for name, vars := range map[string]map[string]string{
		"LIST_MAX_CONCURRENT":  {"NOTES_LIST_MAX_CONCURRENT": "0"},
		"LIST_MAX_PER_ACCOUNT": {"NOTES_LIST_MAX_CONCURRENT": "2", "NOTES_LIST_MAX_PER_ACCOUNT": "3"},
		"LIST_WAIT":            {"NOTES_LIST_WAIT": "10s"},
		"LIST_BATCH_SIZE":      {"NOTES_LIST_BATCH_SIZE": "0"},
		"WEBHOOK_WORKERS":      {"NOTES_DB_MAX_OPEN_CONNS": "10", "NOTES_WEBHOOK_WORKERS": "10"},
	} {
		if _, err := Load(env(vars)); err == nil || !strings.Contains(err.Error(), "NOTES_"+name) {
			t.Errorf("%v: error %v does not name NOTES_%s", vars, err, name)
		}
	}
	// Webhook workers take at most half a small pool by default.
	if c, err := Load(env(map[string]string{"NOTES_DB_MAX_OPEN_CONNS": "8"})); err != nil || c.WebhookWorkers != 4 {
		t.Errorf("webhook workers on a pool of 8 = %d, %v; want 4", c.WebhookWorkers, err)
	}
	if _, err := Load(env(map[string]string{"NOTES_LIST_MAX_PER_ACCOUNT": "-1"})); err == nil {
		t.Error("a negative per-account bound was accepted")
	}
}

func TestRateLimitSetting(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil || c.RateLimitPerSecond != 50 {
		t.Fatalf("default rate limit = %d (%v), want 50", c.RateLimitPerSecond, err)
	}
	for v, want := range map[string]int{"0": 0, "1": 1, "100000": 100_000} {
		if c, err := Load(env(map[string]string{"NOTES_RATE_LIMIT_PER_SECOND": v})); err != nil || c.RateLimitPerSecond != want {
			t.Errorf("NOTES_RATE_LIMIT_PER_SECOND=%s: %d (%v), want %d", v, c.RateLimitPerSecond, err, want)
		}
	}
	for _, v := range []string{"-1", "100001", "fast"} {
		if _, err := Load(env(map[string]string{"NOTES_RATE_LIMIT_PER_SECOND": v})); err == nil || !strings.Contains(err.Error(), "NOTES_RATE_LIMIT_PER_SECOND") {
			t.Errorf("NOTES_RATE_LIMIT_PER_SECOND=%s: error %v does not name it", v, err)
		}
	}
}

func TestWebhookSettings(t *testing.T) {
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes
	c, err := Load(env(map[string]string{"NOTES_WEBHOOK_SECRET_KEY": key, "NOTES_WEBHOOK_ALLOW_PRIVATE": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.WebhookSecretKey != key || !c.WebhookAllowPrivate || c.WebhookWorkers != 10 || c.WebhookPerEndpoint != 4 || c.WebhookRetryBase != 30*time.Second {
		t.Errorf("config = %+v", c)
	}
	if c, err := Load(env(map[string]string{"NOTES_WEBHOOK_RETRY_BASE": "1s"})); err != nil || c.WebhookRetryBase != time.Second {
		t.Errorf("NOTES_WEBHOOK_RETRY_BASE=1s: %v, %v", c.WebhookRetryBase, err)
	}
	if _, err := Load(env(map[string]string{"NOTES_WEBHOOK_RETRY_BASE": "1ms"})); err == nil || !strings.Contains(err.Error(), "NOTES_WEBHOOK_RETRY_BASE") {
		t.Errorf("NOTES_WEBHOOK_RETRY_BASE=1ms: error %v, want one naming it", err)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	if strings.Contains(b.String(), key) || !strings.Contains(b.String(), `"webhook_secret_key":"xxxxx"`) {
		t.Errorf("logged config leaks or lacks the masked webhook key: %s", b.String())
	}
	_, err = Load(env(map[string]string{"NOTES_WEBHOOK_SECRET_KEY": "c2hvcnQ=", "NOTES_WEBHOOK_ALLOW_PRIVATE": "maybe"}))
	for _, name := range []string{"WEBHOOK_SECRET_KEY", "WEBHOOK_ALLOW_PRIVATE"} {
		if err == nil || !strings.Contains(err.Error(), "NOTES_"+name) {
			t.Errorf("error %v does not name NOTES_%s", err, name)
		}
	}
	if err != nil && strings.Contains(err.Error(), "c2hvcnQ=") {
		t.Errorf("error quotes the key: %v", err)
	}
}
