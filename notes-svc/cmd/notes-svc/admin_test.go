package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
)

const adminToken = "billing-token-0123456789abcdef0123456789"

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// call sends a request to addr with the bearer token and decodes a 2xx
// JSON answer into out.
func call(t *testing.T, addr, method, path, token, body string, out any) int {
	t.Helper()
	req := httptest.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	req.RequestURI = ""
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out == nil || res.StatusCode >= 300 {
		_, _ = io.Copy(io.Discard, res.Body)
	} else if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode
}

type issued struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// TestAdminKeyLifecycle is the admin API end to end on a real notes-svc
// serve wiring and PostgreSQL: an account and a key made over HTTP on the
// admin listener work on the public one; a roll keeps both keys working
// for its grace, then the old one is refused although its verification is
// still in the 30 s key cache; a revocation bites at once on this
// replica. The audit trail names the token, and the metrics count it all.
func TestAdminKeyLifecycle(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "admin-tokens")
	if err := os.WriteFile(tokens, []byte("billing:"+adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	public, admin := freeAddr(t), freeAddr(t)
	env := map[string]string{
		"NOTES_DATABASE_URL":     testenv.DatabaseURL(t),
		"NOTES_HTTP_ADDR":        public,
		"NOTES_ADMIN_ADDR":       admin,
		"NOTES_ADMIN_TOKEN_FILE": tokens,
		"NOTES_KEY_CACHE_TTL":    "30s",
		"NOTES_SHUTDOWN_DRAIN":   "0s",
		"NOTES_LOG_LEVEL":        "warn",
	}
	getenv := func(k string) string { return env[k] }
	if err := run(context.Background(), []string{"migrate"}, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &logbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for healthcheck.Check(ctx, public, io.Discard) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 20s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Each listener refuses the other's credential.
	if st := call(t, admin, "GET", "/admin/v1/audit", "", "", nil); st != http.StatusUnauthorized {
		t.Errorf("admin API without a token: %d", st)
	}
	var acct struct{ ID string }
	if st := call(t, admin, "POST", "/admin/v1/accounts", adminToken, `{"name":"acme"}`, &acct); st != http.StatusCreated {
		t.Fatalf("create account: %d", st)
	}
	var k issued
	if st := call(t, admin, "POST", "/admin/v1/accounts/"+acct.ID+"/keys", adminToken,
		`{"scopes":["notes:read","notes:write"],"name":"prod"}`, &k); st != http.StatusCreated || !strings.HasPrefix(k.Secret, "tdn_") {
		t.Fatalf("create key: %d %+v", st, k)
	}
	if st := call(t, admin, "GET", "/admin/v1/audit", k.Secret, "", nil); st != http.StatusUnauthorized {
		t.Errorf("an API key on the admin port: %d, want 401", st)
	}
	if st := call(t, public, "GET", "/v1/notes", adminToken, "", nil); st != http.StatusUnauthorized {
		t.Errorf("the admin token on the public port: %d, want 401", st)
	}
	if st := call(t, public, "GET", "/admin/v1/audit", adminToken, "", nil); st != http.StatusUnauthorized && st != http.StatusNotFound {
		t.Errorf("an admin route on the public port: %d, want 401 or 404", st)
	}

	var note struct{ ID string }
	if st := call(t, public, "POST", "/v1/notes", k.Secret, `{"title":"rotate","content":"me"}`, &note); st != http.StatusCreated {
		t.Fatalf("create a note with the issued key: %d", st)
	}
	reads := func(key string) int { return call(t, public, "GET", "/v1/notes/"+note.ID, key, "", nil) }

	var rolled struct{ Old, New issued }
	if st := call(t, admin, "POST", "/admin/v1/keys/"+k.ID+"/roll", adminToken, `{"expires_in":"2s"}`, &rolled); st != http.StatusCreated || rolled.New.Secret == "" {
		t.Fatalf("roll: %d %+v", st, rolled)
	}
	graceEnds := time.Now().Add(2 * time.Second)
	if st := reads(k.Secret); st != http.StatusOK {
		t.Errorf("old key during the grace: %d", st)
	}
	// The successor reads the notes of the same account.
	if st := reads(rolled.New.Secret); st != http.StatusOK {
		t.Errorf("successor during the grace: %d", st)
	}
	if time.Now().After(graceEnds) {
		t.Fatal("the machine took longer than the grace to make two requests; the grace checks above proved nothing")
	}
	time.Sleep(time.Until(graceEnds) + 200*time.Millisecond)
	if st := reads(k.Secret); st != http.StatusUnauthorized {
		t.Errorf("old key after its grace: %d, want 401", st)
	}
	if st := reads(rolled.New.Secret); st != http.StatusOK {
		t.Errorf("successor after the grace: %d", st)
	}

	if st := call(t, admin, "DELETE", "/admin/v1/keys/"+rolled.New.ID, adminToken, "", nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	if st := reads(rolled.New.Secret); st != http.StatusUnauthorized {
		t.Errorf("revoked key: %d, want 401", st)
	}

	var keys struct {
		Data []struct {
			ID        string
			Secret    string
			ExpiresAt *time.Time `json:"expires_at"`
			RevokedAt *time.Time `json:"revoked_at"`
		}
	}
	if st := call(t, admin, "GET", "/admin/v1/accounts/"+acct.ID+"/keys", adminToken, "", &keys); st != http.StatusOK || len(keys.Data) != 2 {
		t.Fatalf("list keys: %d %+v", st, keys)
	}
	for _, kv := range keys.Data {
		if kv.Secret != "" {
			t.Errorf("a listing shows a secret: %+v", kv)
		}
	}
	var audit struct {
		Data []struct{ Actor, Action, KeyID string }
	}
	if st := call(t, admin, "GET", "/admin/v1/audit", adminToken, "", &audit); st != http.StatusOK {
		t.Fatalf("audit: %d", st)
	}
	var actions []string
	for _, e := range audit.Data {
		actions = append(actions, e.Action)
		if e.Actor != "billing" {
			t.Errorf("audit entry %+v: the actor is the token's name", e)
		}
	}
	if got := strings.Join(actions, ","); got != "account.create,key.create,key.roll,key.revoke" {
		t.Errorf("audit actions %s", got)
	}

	metrics := telemetrytest.Scrape(t, http.DefaultClient, "http://"+public+"/metrics")
	for _, want := range []string{
		"notes_admin_keys_created_total 1", "notes_admin_keys_rolled_total 1", "notes_admin_keys_revoked_total 1",
		// The rolled key's grace has passed; the revoked successor never
		// expired.
		"notes_keys_expired 1",
		`notes_admin_requests_total{outcome="ok"} 6`, `notes_admin_requests_total{outcome="unauthorized"} 2`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
