package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/clients/notes/notesapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/delivery"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhookdb"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(testenv.Main(m))
}

// spec is the OpenAPI document and its router, loaded once.
var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

func loadSpec(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	spec.once.Do(func() {
		raw, err := httpapi.OpenAPI()
		if err != nil {
			spec.err = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			spec.err = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			spec.err = err
			return
		}
		doc.Servers = nil // match any host, such as httptest's
		spec.doc = doc
		spec.router, spec.err = gorillamux.NewRouter(doc)
	})
	if spec.err != nil {
		t.Fatalf("openapi: %v", spec.err)
	}
	return spec.doc, spec.router
}

// env is one server on its own database, with keys for two accounts.
type env struct {
	t       *testing.T
	srv     *httptest.Server
	api     *httpapi.Server
	store   *notesdb.Store
	db      *postgres.Pool
	url     string
	tracker *auth.LastUsedTracker
	logs    *logbuf.Buffer
	alice   string // read-write key of account alice
	bob     string // read-write key of account bob
	reader  string // read-only key of account alice
	aliceID string // account id
	// listings bounds the unpaged listings of the server.
	listings *notes.ListLimiter
	// queue delivers webhooks once started (webhooks_test.go).
	queue *delivery.Queue
	hooks *webhookdb.Store
}

type envOptions struct {
	statementTimeout time.Duration
	// poolSize is the connection pool's size; zero means 30.
	poolSize int
	// requestTimeout bounds each API request; zero means 10s.
	requestTimeout time.Duration
	// listPerAccount and listTotal bound unpaged listings; zero means the
	// service's defaults for the pool (2, and a quarter of the pool).
	listPerAccount, listTotal int
	// listWait is how long a listing waits for a process slot.
	listWait time.Duration
	// eventRetention is how far back the feed reaches; zero means the
	// default.
	eventRetention time.Duration
	// tracing, when set, traces the server and its pool (tracing_test.go).
	tracing *tracing.Tracing
	// guard checks webhook URLs; nil admits private addresses, for the
	// test receivers.
	guard *egress.Guard
}

func newEnv(t *testing.T, opts ...envOptions) *env {
	t.Helper()
	var o envOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.poolSize == 0 {
		o.poolSize = 30
	}
	if o.requestTimeout == 0 {
		o.requestTimeout = 10 * time.Second
	}
	if o.listTotal == 0 {
		o.listTotal = max(2, o.poolSize/4)
	}
	if o.listPerAccount == 0 {
		o.listPerAccount = 2
	}
	url := testenv.DatabaseURL(t)
	db, err := notesdb.Open(url, notesdb.PoolOptions{MaxOpenConns: o.poolSize, StatementTimeout: o.statementTimeout,
		Tracer: o.tracing.PgxTracer()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	e := &env{t: t, db: db, url: url, logs: &logbuf.Buffer{}, listings: notes.NewListLimiter(o.listPerAccount, o.listTotal, o.listWait)}
	e.store, err = notesdb.New(db)
	if err != nil {
		t.Fatal(err)
	}
	e.store.SetEventObject(httpapi.NoteObject)
	ctx := context.Background()
	mk := func(account string, scopes ...string) string {
		_, plain, err := e.store.CreateKey(ctx, account, keystore.KeyOptions{Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return plain
	}
	e.alice, e.bob, e.reader = mk("alice"), mk("bob"), mk("alice", notesdb.ScopeRead)
	e.aliceID, err = e.store.EnsureAccount(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	e.tracker = auth.NewLastUsedTracker(e.store.FlushLastUsed)
	// No key cache, so that revocation shows at once.
	authn := auth.NewAuthenticator(auth.Options{Prefix: auth.NotesPrefix, Store: e.store, CacheTTL: -1, OnVerified: e.tracker.Record})
	if o.guard == nil {
		o.guard = &egress.Guard{AllowPrivate: true}
	}
	if e.hooks, err = webhookdb.New(db.DB); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	e.queue, err = delivery.New(delivery.Options{DB: db.DB, Store: e.hooks, Guard: o.guard, EventLog: e.store, Log: quiet,
		PollInterval: 20 * time.Millisecond, RetryBase: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := webhook.NewService(webhook.Options{Store: e.hooks, URLs: o.guard, Redeliverer: e.queue})
	if err != nil {
		t.Fatal(err)
	}
	e.api, err = httpapi.NewServer(httpapi.Options{
		Notes: notes.NewService(e.store, nil).WithListLimiter(e.listings).WithEventRetention(o.eventRetention), Auth: authn, Ping: e.store.Ping, DBStats: postgres.NewPoolCollector(db.PGX, "notes"),
		Log: slog.New(slog.NewJSONHandler(e.logs, nil)), AccessLog: accesslog.New(e.logs, nil), RequestTimeout: o.requestTimeout, Version: "test",
		Trace: o.tracing.Middleware(),
		// On, as in production, so that its headers are checked against
		// the OpenAPI document; never reached.
		RateLimit: keyrate.NewLimiter(100_000, nil),
		Webhooks:  hooks,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.api)
	t.Cleanup(e.srv.Close)
	return e
}

// response is a received and validated response.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r response) note(t *testing.T) noteJSON {
	t.Helper()
	var n noteJSON
	r.json(t, &n)
	return n
}

func (r response) problem(t *testing.T) problemJSON {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.body)
	}
	var p problemJSON
	r.json(t, &p)
	if p.Status != r.status || p.RequestID == "" || p.RequestID != r.header.Get("X-Request-ID") || !strings.HasPrefix(p.Type, "https://") {
		t.Fatalf("problem %+v does not match status %d and X-Request-ID %q", p, r.status, r.header.Get("X-Request-ID"))
	}
	return p
}

// noteJSON is a note as the published OpenAPI document describes it: the
// generated client's model, so that every answer the tests read is also
// held to the document.
type noteJSON = notesapi.Note

type problemJSON struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
	Errors    []struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

func (p problemJSON) fields() []string {
	var out []string
	for _, f := range p.Errors {
		out = append(out, f.Field)
	}
	return out
}

// req is a request to send; headers are name, value pairs.
type req struct {
	method, path string
	key          string
	body         string
	contentType  string
	headers      []string
}

// do sends r and validates the response against the OpenAPI document.
func (e *env) do(r req) response {
	e.t.Helper()
	return e.doT(e.t, r)
}

func (e *env) doT(t testing.TB, r req) response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, e.srv.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.body != "" {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		hr.Header.Add(r.headers[i], r.headers[i+1])
	}
	resp, err := e.srv.Client().Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", r.method, r.path, err)
	}
	out := response{status: resp.StatusCode, header: resp.Header, body: data}
	// Validate against a fresh request: the sent one's body is consumed.
	vr, _ := http.NewRequest(r.method, e.srv.URL+r.path, strings.NewReader(r.body))
	vr.Header = hr.Header.Clone()
	if err := validateResponse(t, vr, out); err != nil {
		t.Fatalf("%s %s → %d does not match the OpenAPI document: %v\nbody: %.500s", r.method, r.path, out.status, err, data)
	}
	return out
}

// validateResponse checks a response against the OpenAPI document. Paths
// or methods the document does not have can only answer 404 or 405
// problems, checked against the Problem schema.
func validateResponse(t testing.TB, r *http.Request, resp response) error {
	doc, router := loadSpec(t.(*testing.T))
	route, params, err := router.FindRoute(r)
	if err != nil {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			return err
		}
		if resp.status != http.StatusNotFound && resp.status != http.StatusMethodNotAllowed {
			return errors.New("undocumented route answered something else than 404 or 405")
		}
		if resp.status == http.StatusMethodNotAllowed && resp.header.Get("Allow") == "" {
			return errors.New("405 without Allow")
		}
		var v any
		if err := json.Unmarshal(resp.body, &v); err != nil {
			return err
		}
		return doc.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.status, Header: resp.header,
		Body: io.NopCloser(bytes.NewReader(resp.body)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (e *env) create(key string, title, content string, tags ...string) noteJSON {
	e.t.Helper()
	body := map[string]any{"title": title, "content": content}
	if tags != nil {
		body["tags"] = tags
	}
	r := e.do(req{method: "POST", path: "/v1/notes", key: key, body: mustJSON(body)})
	if r.status != http.StatusCreated {
		e.t.Fatalf("create: %d %s", r.status, r.body)
	}
	return r.note(e.t)
}
