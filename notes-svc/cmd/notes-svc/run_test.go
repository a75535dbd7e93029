package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// monitoredMetrics is the list deploy/monitoring/check derives from the
// alert rules and dashboards: every metric of notes-svc they name.
const monitoredMetrics = "../../../deploy/monitoring/metrics-notes-svc.txt"

func TestVersionAndUsage(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, func(string) string { return "" }, &out); err != nil || out.String() != "notes-svc dev\n" {
			t.Errorf("%s: %q, %v", arg, out.String(), err)
		}
	}
	if err := run(context.Background(), []string{"bogus"}, func(string) string { return "" }, &bytes.Buffer{}); err == nil {
		t.Error("unknown command accepted")
	}
	if err := run(context.Background(), []string{"migrate"}, func(string) string { return "" }, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "NOTES_DATABASE_URL") {
		t.Errorf("migrate without database: %v", err)
	}
}

func TestMigrateKeysServe(t *testing.T) {
	env := map[string]string{
		"NOTES_DATABASE_URL":   testenv.DatabaseURL(t),
		"NOTES_HTTP_ADDR":      "127.0.0.1:0",
		"NOTES_SHUTDOWN_DRAIN": "0s",
	}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	// Migrating an up-to-date database is a no-op.
	if err := run(ctx, []string{"migrate"}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"keys", "create", "--account", "demo"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, "tdn_") || len(key) != 53 {
		t.Fatalf("last line %q is not a key; output:\n%s", key, out.String())
	}
	var keyID string
	for _, l := range lines {
		if id, ok := strings.CutPrefix(l, "key id: "); ok {
			keyID = id
		}
	}
	out.Reset()
	if err := run(ctx, []string{"keys", "list"}, getenv, &out); err != nil || !strings.Contains(out.String(), keyID) || strings.Contains(out.String(), key) {
		t.Fatalf("keys list: %v\n%s", err, out.String())
	}
	if err := run(ctx, []string{"keys", "create"}, getenv, &bytes.Buffer{}); err == nil {
		t.Error("keys create without --account accepted")
	}

	// serve until cancelled, then shut down cleanly.
	serveCtx, cancel := context.WithCancel(ctx)
	logs := &logbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(serveCtx, nil, getenv, logs) }()
	var addr string
	for i := 0; i < 200 && addr == ""; i++ {
		time.Sleep(25 * time.Millisecond)
		for _, l := range strings.Split(logs.String(), "\n") {
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(l), &entry) == nil && entry.Msg == "listening" {
				addr = entry.Addr
			}
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("server did not start: %s", logs.String())
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/notes", strings.NewReader(`{"title":"hi","content":"there"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create via served API: %v %v", resp, err)
	}
	resp.Body.Close()
	// The unpaged listing goes through the wired limiter, whose metrics
	// are exported.
	req, _ = http.NewRequest("GET", "http://"+addr+"/v1/notes?sort=title", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(listed), `"title":"hi"`) {
		t.Errorf("list via served API: %d %s", resp.StatusCode, listed)
	}
	metrics := telemetrytest.Scrape(t, http.DefaultClient, "http://"+addr+"/metrics")
	for _, want := range []string{"notes_listings_in_progress 0", `notes_listings_refused_total{reason="account"} 0`, `notes_listings_refused_total{reason="busy"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if missing := telemetrytest.MissingMetrics(t, monitoredMetrics, metrics); len(missing) > 0 {
		t.Errorf("the alerts and dashboards use metrics the served process does not export: %v", missing)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Error("no clean stop logged")
	}
	// The final flush recorded the key's last use.
	out.Reset()
	if err := run(ctx, []string{"keys", "list", "--account", "demo"}, getenv, &out); err != nil || strings.Count(out.String(), "Z") < 2 {
		t.Errorf("last use not flushed at shutdown:\n%s", out.String())
	}
	if err := run(ctx, []string{"keys", "revoke", keyID}, getenv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"keys", "revoke", "key_unknown"}, getenv, &bytes.Buffer{}); err == nil {
		t.Error("revoking an unknown key succeeded")
	}
}
