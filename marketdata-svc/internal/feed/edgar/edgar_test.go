package edgar

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
)

// fakeSEC serves the demo's synthetic documents at SEC's paths and, as
// SEC's "Accessing EDGAR Data" says it does, refuses (403) a request whose
// User-Agent does not name a contact. It records the User-Agents seen.
func fakeSEC(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	docs := map[string]string{
		"/submissions/CIK0000000042.json":           "edgar-submissions-synthetic.json",
		"/api/xbrl/companyfacts/CIK0000000042.json": "edgar-companyfacts-synthetic.json",
		"/submissions/CIK0000000043.json":           "edgar-submissions-synthetic.json", // holds CIK 42
	}
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua := r.Header.Get("User-Agent")
		agents = append(agents, ua)
		if !strings.Contains(ua, "@") {
			http.Error(w, "Your Request Originates from an Undeclared Automated Tool", http.StatusForbidden)
			return
		}
		name, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile("../../demo/data/" + name)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &agents
}

func syncConfig(url, ua string) config.Sync {
	return config.Sync{Timeout: 5 * time.Second, Retries: 0, Backoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		EDGAR: config.SyncProvider{URL: url, RatePerMinute: 600, Burst: 10}, EDGARUserAgent: ua}
}

// TestCompanyFetchesBothDocumentsWithTheUserAgent: the submissions and
// the company facts, each checked, every request with the configured
// User-Agent; a company SEC has no facts for is its submissions alone.
func TestCompanyFetchesBothDocumentsWithTheUserAgent(t *testing.T) {
	srv, agents := fakeSEC(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(syncConfig(srv.URL, "Tickerdesk tests ops@example.com"), log)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Company(context.Background(), "42")
	if err != nil || len(got) != 2 || got[0].Submissions == nil || got[1].Facts == nil || got[0].Name != "Example Demo Corp" {
		t.Fatalf("company 42: %+v %v", got, err)
	}
	for _, ua := range *agents {
		if ua != "Tickerdesk tests ops@example.com" {
			t.Errorf("User-Agent %q sent", ua)
		}
	}
	if _, err := s.Company(context.Background(), "43"); err == nil || !strings.Contains(err.Error(), "holds CIK 0000000042") {
		t.Errorf("a document of another CIK: %v", err)
	}
	if _, err := s.Company(context.Background(), "44"); !errors.Is(err, feed.ErrUnknownSymbol) {
		t.Errorf("an unknown CIK: %v, want ErrUnknownSymbol", err)
	}
}

// TestUserAgentIsRequired: without a User-Agent naming a contact the
// source is not built, and SEC's refusal of one without is reported as
// unauthorized, not retried.
func TestUserAgentIsRequired(t *testing.T) {
	srv, agents := fakeSEC(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, ua := range []string{"", "Tickerdesk"} {
		if _, err := New(syncConfig(srv.URL, ua), log); !errors.Is(err, ErrNoUserAgent) {
			t.Errorf("User-Agent %q: %v, want ErrNoUserAgent", ua, err)
		}
	}
	c, err := feed.NewClient(feed.ClientOptions{Provider: "edgar", BaseURL: srv.URL, Timeout: time.Second, RatePerMinute: 600, Burst: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	s := &Source{client: c}
	if _, err := s.Company(context.Background(), "42"); !errors.Is(err, feed.ErrUnauthorized) {
		t.Errorf("no User-Agent: %v, want ErrUnauthorized", err)
	}
	if n := len(*agents); n != 1 {
		t.Errorf("%d requests, want 1 (a 403 is not retried)", n)
	}
}
