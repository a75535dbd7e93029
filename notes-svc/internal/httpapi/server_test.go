package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes/notestest"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// keyStore knows the keys a test issued.
type keyStore map[auth.Hash]auth.Principal

func (k keyStore) LookupKey(_ context.Context, h auth.Hash) (auth.Principal, error) {
	p, ok := k[h]
	if !ok {
		return auth.Principal{}, auth.ErrKeyNotFound
	}
	return p, nil
}

// harness is a Server wired as cmd/notes-svc wires it, on an in-memory
// store, with one key for each of two accounts.
type harness struct {
	t          testing.TB
	srv        *httpapi.Server
	store      *notestest.Store
	alice, bob string // bearer keys
	logs       *logbuf.Buffer
}

func newHarness(t testing.TB) harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with the Options changed by change first.
func newHarnessWith(t testing.TB, change func(*httpapi.Options)) harness {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	store := notestest.New()
	keys := keyStore{}
	issue := func(account string) string {
		plain, hash, err := auth.Generate(auth.NotesPrefix)
		if err != nil {
			t.Fatal(err)
		}
		keys[hash] = auth.Principal{AccountID: account, KeyID: "key_" + account, Scopes: []string{"notes:read", "notes:write"}}
		return plain
	}
	h := harness{t: t, store: store, alice: issue("acct_alice"), bob: issue("acct_bob"), logs: &logbuf.Buffer{}}
	log := slog.New(slog.NewJSONHandler(h.logs, nil))
	o := httpapi.Options{
		Notes: notes.NewService(store, nil).WithListLimiter(notes.NewListLimiter(2, 8, 0)),
		Auth:  auth.NewAuthenticator(auth.Options{Prefix: auth.NotesPrefix, Store: keys}),
		Ping:  func(context.Context) error { return nil },
		Log:   log, AccessLog: accesslog.New(h.logs, nil), Version: "test",
	}
	if change != nil {
		change(&o)
	}
	srv, err := httpapi.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	return h
}

// do sends a request with key as the bearer and returns the response with
// its body read.
func (h harness) do(method, path, key, body string, header map[string]string) (*http.Response, string) {
	h.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	resp := w.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

type noteBody struct {
	ID, Title, Content string
	Tags               []string
}

func (h harness) create(key string) (noteBody, string) {
	h.t.Helper()
	resp, body := h.do("POST", "/v1/notes", key, `{"title":"Quarterly review","content":"Margins held.","tags":["Research"]}`, nil)
	if resp.StatusCode != http.StatusCreated {
		h.t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var n noteBody
	if err := json.Unmarshal([]byte(body), &n); err != nil {
		h.t.Fatal(err)
	}
	return n, resp.Header.Get("ETag")
}

func TestCreateGetRoundTripWithETag(t *testing.T) {
	h := newHarness(t)
	created, tag := h.create(h.alice)
	if tag != `"1"` {
		t.Errorf("ETag of a new note = %s, want \"1\"", tag)
	}
	resp, body := h.do("GET", "/v1/notes/"+created.ID, h.alice, "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != tag {
		t.Fatalf("get: %d ETag %s: %s", resp.StatusCode, resp.Header.Get("ETag"), body)
	}
	var got noteBody
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != created.ID || got.Title != "Quarterly review" || got.Content != "Margins held." ||
		len(got.Tags) != 1 || got.Tags[0] != "research" {
		t.Errorf("got %+v, created %+v", got, created)
	}
	// The tag validates the cached copy.
	resp, _ = h.do("GET", "/v1/notes/"+created.ID, h.alice, "", map[string]string{"If-None-Match": tag})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current tag: %d, want 304", resp.StatusCode)
	}
}

func TestAnotherAccountsNoteIsNotFound(t *testing.T) {
	h := newHarness(t)
	n, _ := h.create(h.alice)
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		body := ""
		if method == "PUT" {
			body = `{"title":"mine now","content":""}`
		}
		resp, got := h.do(method, "/v1/notes/"+n.ID, h.bob, body, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(got, `"type":"https://tickerdesk.dev/problems/not-found"`) {
			t.Errorf("%s by another account: %d %s", method, resp.StatusCode, got)
		}
	}
	if resp, _ := h.do("GET", "/v1/notes/"+n.ID, h.alice, "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("owner lost the note: %d", resp.StatusCode)
	}
}

func TestStaleIfMatchIsPreconditionFailed(t *testing.T) {
	h := newHarness(t)
	n, tag := h.create(h.alice)
	resp, body := h.do("PUT", "/v1/notes/"+n.ID, h.alice, `{"title":"v2","content":"x"}`, map[string]string{"If-Match": tag})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"2"` {
		t.Fatalf("put with the current tag: %d ETag %s: %s", resp.StatusCode, resp.Header.Get("ETag"), body)
	}
	for _, method := range []string{"PUT", "DELETE"} {
		body := ""
		if method == "PUT" {
			body = `{"title":"lost update","content":"x"}`
		}
		resp, got := h.do(method, "/v1/notes/"+n.ID, h.alice, body, map[string]string{"If-Match": tag})
		if resp.StatusCode != http.StatusPreconditionFailed || !strings.Contains(got, `"type":"https://tickerdesk.dev/problems/precondition-failed"`) {
			t.Errorf("%s with a stale If-Match: %d %s", method, resp.StatusCode, got)
		}
	}
	_, body = h.do("GET", "/v1/notes/"+n.ID, h.alice, "", nil)
	if !strings.Contains(body, `"title":"v2"`) {
		t.Errorf("a refused write changed the note: %s", body)
	}
}

func TestUnknownStoreErrorIsGeneric500(t *testing.T) {
	h := newHarness(t)
	n, _ := h.create(h.alice)
	secret := errors.New(`pq: relation "notes_secret_shard_7" does not exist at 10.0.0.7:5432`)
	h.store.FailWith(secret)
	resp, body := h.do("GET", "/v1/notes/"+n.ID, h.alice, "", nil)
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("unknown store error: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var p struct {
		Type, Title, Detail string
		Status              int
		RequestID           string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "https://tickerdesk.dev/problems/internal" || p.Status != 500 || p.RequestID == "" ||
		p.Detail != "The server failed to handle the request; quote the request_id when reporting it." {
		t.Errorf("problem = %s", body)
	}
	for _, leak := range []string{"notes_secret_shard_7", "10.0.0.7", "pq:", "get note"} {
		if strings.Contains(body, leak) {
			t.Errorf("the answer leaks %q: %s", leak, body)
		}
	}
	// The cause goes to the log instead, under the request id the client
	// can quote.
	if !strings.Contains(h.logs.String(), "notes_secret_shard_7") || !strings.Contains(h.logs.String(), p.RequestID) {
		t.Errorf("cause or request id not logged: %s", h.logs.String())
	}
}
