package adminapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

const (
	billing = "billing-token-0123456789abcdef0123456789"
	signup  = "signup-token-0123456789abcdef0123456789x"
)

// newTestAPI serves the admin API on a store with no database: every
// request here must be refused before the store is reached.
func newTestAPI(t *testing.T) (http.Handler, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# rotate by adding the next\nbilling:"+billing+"\nsignup:"+signup+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	toks, err := LoadTokens(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := keystore.New(nil, keystore.Config{Prefix: auth.NotesPrefix, Scopes: []string{"notes:read", "notes:write"},
		DefaultScopes: []string{"notes:read"}, ValidID: func(string) bool { return true }})
	h, err := New(Options{Service: "test", Store: store, Tokens: toks, Namespace: "test", Registry: prometheus.NewRegistry(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return h, path
}

func call(h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestHostileInputs: each is refused with its status in problem+json,
// before any store call (the store here has no database).
func TestHostileInputs(t *testing.T) {
	h, _ := newTestAPI(t)
	key, _, _ := auth.Generate(auth.NotesPrefix)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"no token", "GET", "/admin/v1/audit", "", "", 401},
		{"a public key", "GET", "/admin/v1/audit", key, "", 401},
		{"a token's prefix", "GET", "/admin/v1/audit", billing[:len(billing)-1], "", 401},
		{"forged body", "POST", "/admin/v1/accounts", billing, `{"name":`, 400},
		{"two objects", "POST", "/admin/v1/accounts", billing, `{"name":"a"}{"name":"b"}`, 400},
		{"unknown member", "POST", "/admin/v1/accounts", billing, `{"name":"a","admin":true}`, 400},
		{"wrong type", "POST", "/admin/v1/accounts/x/keys", billing, `{"scopes":"notes:read"}`, 400},
		{"oversized body", "POST", "/admin/v1/accounts", billing, `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, 413},
		{"no name", "POST", "/admin/v1/accounts", billing, `{}`, 422},
		{"unknown scope", "POST", "/admin/v1/accounts/x/keys", billing, `{"scopes":["notes:admin"]}`, 422},
		{"no scope", "POST", "/admin/v1/accounts/x/keys", billing, `{"scopes":[]}`, 422},
		{"expiry in the past", "POST", "/admin/v1/accounts/x/keys", billing, `{"expires_at":"` + past + `"}`, 422},
		{"expiry unparseable", "POST", "/admin/v1/accounts/x/keys", billing, `{"expires_at":"tomorrow"}`, 422},
		{"limits on notes", "POST", "/admin/v1/accounts/x/keys", billing, `{"rate_per_second":5}`, 422},
		{"grace too long", "POST", "/admin/v1/keys/x/roll", signup, `{"expires_in":"721h"}`, 422},
		{"grace negative", "POST", "/admin/v1/keys/x/roll", signup, `{"expires_in":"-1s"}`, 422},
		{"grace unparseable", "POST", "/admin/v1/keys/x/roll", signup, `{"expires_in":"soon"}`, 422},
		{"bad cursor", "GET", "/admin/v1/audit?after=-1", billing, "", 400},
		{"bad limit", "GET", "/admin/v1/audit?limit=100000", billing, "", 400},
		{"unknown route", "GET", "/v1/notes", billing, "", 404},
	}
	for _, c := range cases {
		w := call(h, c.method, c.path, c.token, c.body)
		if w.Code != c.status || w.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(w.Body.String(), `"status":`) {
			t.Errorf("%s: %d %q %s, want %d problem+json", c.name, w.Code, w.Header().Get("Content-Type"), w.Body.String(), c.status)
		}
		if strings.Contains(w.Body.String(), billing) || strings.Contains(w.Body.String(), key) {
			t.Errorf("%s: the answer echoes a secret", c.name)
		}
	}
	t.Logf("%d hostile inputs refused", len(cases))
	if w := call(h, "GET", "/admin/v1/openapi.json", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"openapi"`) {
		t.Errorf("openapi: %d", w.Code)
	}
	if w := call(h, "GET", "/docs", "", ""); w.Code != 200 {
		t.Errorf("docs: %d", w.Code)
	}
}

// TestTokenFile: bad files are refused naming the line, never the token;
// a changed file is read again, a broken change keeps the old tokens.
func TestTokenFile(t *testing.T) {
	for _, bad := range []string{"", "# only a comment\n", "billing\n", "billing:short\n", "bad name:" + billing + "\n",
		"cli:" + billing + "\n", "a:" + billing + "\na:" + signup + "\n"} {
		if _, err := parseTokens(bad); err == nil || strings.Contains(err.Error(), billing) {
			t.Errorf("parse %q: %v", bad, err)
		}
	}
	h, path := newTestAPI(t)
	if w := call(h, "GET", "/admin/v1/audit?after=x", signup, ""); w.Code != 400 {
		t.Fatalf("second token: %d", w.Code)
	}
	// Rotation: signup's token goes; billing stays.
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(path, []byte("billing:"+billing+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(path, later, later)
	if w := call(h, "GET", "/admin/v1/audit?after=x", signup, ""); w.Code != 401 {
		t.Errorf("removed token: %d, want 401", w.Code)
	}
	if err := os.WriteFile(path, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(path, later.Add(time.Second), later.Add(time.Second))
	if w := call(h, "GET", "/admin/v1/audit?after=x", billing, ""); w.Code != 400 {
		t.Errorf("after a broken change the previous tokens stay: %d, want 400", w.Code)
	}
}

// TestDatabaseBusyIs503: a statement timeout (a lock wait on a key that
// concurrent rolls queue on) or a lost connection is a 503 with
// Retry-After, never a 500, and another driver error a 500.
func TestDatabaseBusyIs503(t *testing.T) {
	s := &server{o: Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("roll key: %w", &pgconn.PgError{Code: "57014"}), http.StatusServiceUnavailable},
		{fmt.Errorf("roll key: %w", &pgconn.PgError{Code: "55P03"}), http.StatusServiceUnavailable},
		{fmt.Errorf("revoke key: %w", &pgconn.PgError{Code: "08006"}), http.StatusServiceUnavailable},
		{fmt.Errorf("create key: %w", &pgconn.PgError{Code: "42P01"}), http.StatusInternalServerError},
	} {
		w := httptest.NewRecorder()
		c2, _ := gin.CreateTestContext(w)
		s.fail(c2, c.err)
		if w.Code != c.want || (c.want == http.StatusServiceUnavailable) != (w.Header().Get("Retry-After") == "1") ||
			w.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%v: %d %v %s, want %d", c.err, w.Code, w.Header(), w.Body, c.want)
		}
	}
}
