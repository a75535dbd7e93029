package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestSyncEDGARCommand runs `sync --provider edgar` through run against a
// fake of SEC's two documents that, as SEC does, refuses a request whose
// User-Agent names no contact: without MARKETDATA_SYNC_EDGAR_USER_AGENT
// nothing is fetched; with it the company's documents are stored, and a
// second run changes nothing.
func TestSyncEDGARCommand(t *testing.T) {
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents = append(agents, r.Header.Get("User-Agent"))
		if !strings.Contains(r.Header.Get("User-Agent"), "@") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		name := map[string]string{"/submissions/CIK0000000042.json": "edgar-submissions-synthetic.json",
			"/api/xbrl/companyfacts/CIK0000000042.json": "edgar-companyfacts-synthetic.json"}[r.URL.Path]
		if name == "" {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile("../../internal/demo/data/" + name)
		if err != nil {
			t.Error(err)
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	env := map[string]string{
		"MARKETDATA_DATABASE_URL":   testenv.Postgres(t),
		"MARKETDATA_SYNC_EDGAR_URL": srv.URL,
	}
	sync := func() (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), []string{"sync", "--provider", "edgar", "--cik", "42"}, func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	if _, err := sync(); err == nil || !strings.Contains(err.Error(), "MARKETDATA_SYNC_EDGAR_USER_AGENT") || len(agents) != 0 {
		t.Fatalf("without a User-Agent: %v after %d requests, want a refusal before any", err, len(agents))
	}
	env["MARKETDATA_SYNC_EDGAR_USER_AGENT"] = "Tickerdesk tests ops@example.com"
	out, err := sync()
	if err != nil || !strings.Contains(out, "edgar 0000000042: Example Demo Corp, 2 documents, 2 changed") {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	if out, err := sync(); err != nil || !strings.Contains(out, "0 changed") {
		t.Fatalf("second sync: %v\n%s", err, out)
	}
	for _, ua := range agents {
		if ua != "Tickerdesk tests ops@example.com" {
			t.Errorf("User-Agent %q sent", ua)
		}
	}
}
