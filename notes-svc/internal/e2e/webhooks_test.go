package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
)

// endpointJSON and deliveryJSON hold what the tests look at; the OpenAPI
// document checks the rest of each answer.
type endpointJSON struct {
	ID, Secret        string
	Types             []string
	Enabled           bool
	PreviousExpiresAt *string `json:"previous_secret_expires_at"`
}

type deliveryJSON struct {
	ID, Status string
	EventID    string `json:"event_id"`
	Attempts   int
	LastStatus *int `json:"last_response_status"`
}

func (e *env) endpoint(key, body string) endpointJSON {
	e.t.Helper()
	r := e.do(req{method: "POST", path: "/v1/webhook_endpoints", key: key, body: body})
	if r.status != http.StatusCreated {
		e.t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	var ep endpointJSON
	r.json(e.t, &ep)
	return ep
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "POST", path: "/v1/webhook_endpoints", key: e.alice, body: `{"url":"http://127.0.0.1:9/hook","types":["note.created","note.deleted"]}`})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var ep endpointJSON
	r.json(t, &ep)
	if !strings.HasPrefix(ep.Secret, "whsec_") || !ep.Enabled || len(ep.Types) != 2 || r.header.Get("Location") != "/v1/webhook_endpoints/"+ep.ID ||
		r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("created %+v, headers %v", ep, r.header)
	}
	path := "/v1/webhook_endpoints/" + ep.ID
	// The secret is shown once.
	for _, got := range []response{e.do(req{method: "GET", path: path, key: e.reader}), e.do(req{method: "GET", path: "/v1/webhook_endpoints", key: e.reader})} {
		if got.status != http.StatusOK || strings.Contains(string(got.body), ep.Secret) || strings.Contains(string(got.body), `"secret"`) {
			t.Errorf("read: %d %s", got.status, got.body)
		}
	}
	if r := e.do(req{method: "POST", path: "/v1/webhook_endpoints", key: e.reader, body: `{"url":"http://127.0.0.1:9/"}`}); r.status != http.StatusForbidden {
		t.Errorf("read-only key created an endpoint: %d", r.status)
	}
	r = e.do(req{method: "PATCH", path: path, key: e.alice, body: `{"types":null,"enabled":false}`, contentType: "application/merge-patch+json"})
	r.json(t, &ep)
	if r.status != http.StatusOK || ep.Enabled || len(ep.Types) != 0 {
		t.Errorf("patch: %d %s", r.status, r.body)
	}
	old := ep.Secret
	r = e.do(req{method: "POST", path: path + "/rotate_secret", key: e.alice})
	var rotated endpointJSON
	r.json(t, &rotated)
	if r.status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == old || rotated.PreviousExpiresAt == nil {
		t.Errorf("rotate: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "DELETE", path: path, key: e.alice}); r.status != http.StatusOK {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := e.do(req{method: m, path: path, key: e.alice}); r.status != http.StatusNotFound || r.problem(t).Type != "https://tickerdesk.dev/problems/not-found" {
			t.Errorf("%s after delete: %d", m, r.status)
		}
	}
	if r := e.do(req{method: "GET", path: "/v1/webhook_endpoints/we_nope!", key: e.alice}); r.status != http.StatusNotFound {
		t.Errorf("malformed id: %d", r.status)
	}
}

func TestWebhookEndpointBadRequests(t *testing.T) {
	e := newEnv(t)
	ep := e.endpoint(e.alice, `{"url":"http://127.0.0.1:9/hook"}`)
	huge := `{"url":"http://127.0.0.1:9/` + strings.Repeat("a", 1<<20) + `"}`
	for _, tc := range []struct {
		r      req
		status int
		field  string
	}{
		{req{method: "POST", path: "/v1/webhook_endpoints", body: huge}, 413, "body"},
		{req{method: "PATCH", path: "/v1/webhook_endpoints/" + ep.ID, body: huge, contentType: "application/merge-patch+json"}, 413, "body"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":`}, 400, "body"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/"} {}`}, 400, "body"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: ` `}, 400, "body"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `[1]`}, 422, "body"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/","secret":"mine"}`}, 422, "secret"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"types":["note.created"]}`}, 422, "url"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":42}`}, 422, "url"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/","types":"note.created"}`}, 422, "types"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/","types":["note.exploded"]}`}, 422, "types"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/","enabled":"yes"}`}, 422, "enabled"},
		{req{method: "POST", path: "/v1/webhook_endpoints", body: `{"url":"http://127.0.0.1:9/"}`, contentType: "text/plain"}, 415, "Content-Type"},
		{req{method: "PATCH", path: "/v1/webhook_endpoints/" + ep.ID, body: `{"enabled":true}`}, 415, "Content-Type"},
		{req{method: "PATCH", path: "/v1/webhook_endpoints/" + ep.ID, body: `{"enabled":null}`, contentType: "application/merge-patch+json"}, 422, "enabled"},
		{req{method: "PATCH", path: "/v1/webhook_endpoints/" + ep.ID, body: `{"url":"ftp://x/"}`, contentType: "application/merge-patch+json"}, 422, "url"},
		{req{method: "GET", path: "/v1/webhook_endpoints/" + ep.ID + "/deliveries?limit=1000"}, 422, "limit"},
	} {
		tc.r.key = e.alice
		r := e.do(tc.r)
		if r.status != tc.status {
			t.Errorf("%s %s %.40s: %d, want %d: %s", tc.r.method, tc.r.path, tc.r.body, r.status, tc.status, r.body)
			continue
		}
		if p := r.problem(t); !slices.Contains(p.fields(), tc.field) {
			t.Errorf("%s %.40s: problem names %v, want %s", tc.r.method, tc.r.body, p.fields(), tc.field)
		}
	}
}

// publicNames resolves like public DNS would, for the refusal tests:
// names given here resolve to what they say, others do not resolve.
type publicNames map[string]string

func (n publicNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("no such host")
}

func TestWebhookURLRefusals(t *testing.T) {
	names := publicNames{"hooks.example": "93.184.215.14", "intranet.example": "10.20.30.40", "metadata.example": "169.254.169.254"}
	strict := newEnv(t, envOptions{guard: &egress.Guard{Resolver: names}})
	dev := newEnv(t, envOptions{guard: &egress.Guard{Resolver: names, AllowPrivate: true}})
	for _, tc := range []struct {
		url         string
		strict, dev int
	}{
		{"https://hooks.example/hook", 201, 201},
		{"http://hooks.example/hook", 422, 201},
		{"https://127.0.0.1/hook", 422, 201},
		{"https://[::1]/hook", 422, 201},
		{"https://localhost/hook", 422, 201},
		{"https://10.0.0.7/hook", 422, 201},
		{"https://100.64.1.1/hook", 422, 201},
		{"https://intranet.example/hook", 422, 201},
		{"https://169.254.169.254/latest/meta-data/", 422, 422},
		{"https://[fd00:ec2::254]/", 422, 422},
		{"https://metadata.example/", 422, 422},
		{"https://169.254.1.1/", 422, 422},
		{"https://[fe80::1]/", 422, 422},
		{"https://0.0.0.0/", 422, 422},
		{"https://239.0.0.1/", 422, 422},
		{"https://user:pw@hooks.example/", 422, 422},
		{"https://nowhere.example/", 422, 422},
		{"https://hooks.example/" + strings.Repeat("a", 2048), 422, 422},
	} {
		for _, c := range []struct {
			e    *env
			want int
		}{{strict, tc.strict}, {dev, tc.dev}} {
			r := c.e.do(req{method: "POST", path: "/v1/webhook_endpoints", key: c.e.alice, body: mustJSON(map[string]string{"url": tc.url})})
			if r.status != c.want {
				t.Errorf("%.60s (allow private %v): %d, want %d: %s", tc.url, c.e == dev, r.status, c.want, r.body)
				continue
			}
			if r.status == 422 {
				if p := r.problem(t); !slices.Equal(p.fields(), []string{"url"}) || p.Errors[0].Detail == "" {
					t.Errorf("%.60s: problem %+v", tc.url, p)
				}
			} else {
				var ep endpointJSON
				r.json(t, &ep)
				c.e.do(req{method: "DELETE", path: "/v1/webhook_endpoints/" + ep.ID, key: c.e.alice})
			}
		}
	}
}

func TestWebhookEndpointLimit(t *testing.T) {
	e := newEnv(t)
	for range 16 {
		e.endpoint(e.alice, `{"url":"http://127.0.0.1:9/"}`)
	}
	r := e.do(req{method: "POST", path: "/v1/webhook_endpoints", key: e.alice, body: `{"url":"http://127.0.0.1:9/"}`})
	if r.status != http.StatusConflict || r.problem(t).Type != "https://tickerdesk.dev/problems/webhook-endpoint-limit" {
		t.Errorf("17th endpoint: %d %s", r.status, r.body)
	}
	e.endpoint(e.bob, `{"url":"http://127.0.0.1:9/"}`)
}

// receiver records the deliveries it gets and answers 200.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	header []http.Header
	body   [][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.header, r.body = append(r.header, req.Header.Clone()), append(r.body, b)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.body)
}

// emit writes an event of the account, as a note write does, and returns
// once the relay has passed it (its deliveries written).
func (e *env) emit(accountID, typ string) string {
	e.t.Helper()
	id, err := notes.NewPrefixedID("evt_")
	if err != nil {
		e.t.Fatal(err)
	}
	var at struct {
		XID string `gorm:"column:xid"`
		Seq int64  `gorm:"column:seq"`
	}
	if err := e.hooks.DB().Raw(`INSERT INTO events (id, account_id, type, created_at, data) VALUES (?, ?, ?, now(), '{"object":{}}') RETURNING xid::text AS xid, seq`,
		id, accountID, typ).Scan(&at).Error; err != nil {
		e.t.Fatal(err)
	}
	waitFor(e.t, "the relay to pass the event", func() bool {
		if _, err := e.queue.RelayOnce(context.Background()); err != nil {
			e.t.Fatal(err)
		}
		var past bool
		if err := e.hooks.DB().Raw("SELECT (after_xid, after_seq) >= (?::xid8, ?) FROM webhook_relay", at.XID, at.Seq).Scan(&past).Error; err != nil {
			e.t.Fatal(err)
		}
		return past
	})
	return id
}

func (e *env) startQueue() {
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.queue.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = e.queue.Stop(sctx)
		cancel()
	})
}

func (e *env) deliveries(key, endpointID, query string) ([]deliveryJSON, response) {
	e.t.Helper()
	r := e.do(req{method: "GET", path: "/v1/webhook_endpoints/" + endpointID + "/deliveries" + query, key: key})
	var out []deliveryJSON
	if r.status == http.StatusOK {
		r.json(e.t, &out)
	}
	return out, r
}

func TestWebhookDeliveryLogAndRetry(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	ep := e.endpoint(e.alice, mustJSON(map[string]string{"url": rcv.URL + "/hook"}))
	bobID, err := e.store.EnsureAccount(context.Background(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	first := e.emit(e.aliceID, "note.created")
	second := e.emit(e.aliceID, "note.updated")
	e.emit(bobID, "note.created") // bob has no endpoint: nothing for alice's
	e.startQueue()
	var ds []deliveryJSON
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds, _ = e.deliveries(e.reader, ep.ID, "")
		if len(ds) == 2 && ds[0].Status == "succeeded" && ds[1].Status == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries never succeeded: %+v", ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ds[0].EventID != second || ds[1].EventID != first || ds[0].Attempts != 1 || *ds[0].LastStatus != 200 {
		t.Errorf("log, newest first: %+v", ds)
	}
	rcv.mu.Lock()
	for i, b := range rcv.body {
		if err := webhook.Verify(ep.Secret, rcv.header[i].Get("Tickerdesk-Signature"), b, time.Minute); err != nil {
			t.Errorf("delivery %d: %v", i, err)
		}
	}
	rcv.mu.Unlock()
	page, r := e.deliveries(e.alice, ep.ID, "?limit=1&offset=1")
	if len(page) != 1 || page[0].EventID != first || r.header.Get("X-Total-Count") != "2" || !strings.Contains(r.header.Get("Link"), `rel="first"`) {
		t.Errorf("page: %+v, headers %v", page, r.header)
	}

	// Another account sees none of it and cannot retry it.
	path := "/v1/webhook_endpoints/" + ep.ID
	retry := path + "/deliveries/" + ds[1].ID + "/retry"
	for _, rq := range []req{
		{method: "GET", path: path},
		{method: "PATCH", path: path, body: `{"enabled":false}`, contentType: "application/merge-patch+json"},
		{method: "POST", path: path + "/rotate_secret"},
		{method: "GET", path: path + "/deliveries"},
		{method: "POST", path: retry},
		{method: "DELETE", path: path},
	} {
		rq.key = e.bob
		if r := e.do(rq); r.status != http.StatusNotFound {
			t.Errorf("bob %s %s: %d, want 404", rq.method, rq.path, r.status)
		} else {
			r.problem(t)
		}
	}
	if r := e.do(req{method: "GET", path: "/v1/webhook_endpoints", key: e.bob}); strings.TrimSpace(string(r.body)) != "[]" {
		t.Errorf("bob's endpoints: %s", r.body)
	}
	if r := e.do(req{method: "POST", path: path + "/deliveries/whd_0123/retry", key: e.alice}); r.status != http.StatusNotFound {
		t.Errorf("retry of an unknown delivery: %d", r.status)
	}

	if r := e.do(req{method: "POST", path: retry, key: e.alice}); r.status != http.StatusAccepted {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
	for rcv.count() < 3 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("the retried delivery never came")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rcv.mu.Lock()
	got := rcv.header[2].Get("Tickerdesk-Event-Id")
	rcv.mu.Unlock()
	if got != first {
		t.Errorf("retried event %s, want %s", got, first)
	}
}

// TestNoteChangesReachTheReceiver is the whole path: notes written
// through the API append their events, the relay turns them into
// deliveries, and the receiver gets each change once, signed, with the
// event's id in its header; another account's changes never reach it.
func TestNoteChangesReachTheReceiver(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t)
	ep := e.endpoint(e.alice, mustJSON(map[string]string{"url": rcv.URL + "/hook"}))
	e.startQueue()

	created := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: `{"title":"hooked","content":"c"}`})
	if created.status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	var n struct{ ID string }
	created.json(t, &n)
	for _, rq := range []req{
		{method: "PATCH", path: "/v1/notes/" + n.ID, key: e.alice, body: `{"title":"hooked again"}`, contentType: "application/merge-patch+json"},
		{method: "POST", path: "/v1/notes/" + n.ID + "/trash", key: e.alice},
		{method: "POST", path: "/v1/notes/" + n.ID + "/restore", key: e.alice},
		{method: "DELETE", path: "/v1/notes/" + n.ID, key: e.alice},
		{method: "POST", path: "/v1/notes", key: e.bob, body: `{"title":"bob's","content":""}`},
	} {
		if r := e.do(rq); r.status >= 300 {
			t.Fatalf("%s %s: %d %s", rq.method, rq.path, r.status, r.body)
		}
	}
	want := []string{"note.created", "note.updated", "note.trashed", "note.restored", "note.deleted"}
	waitFor(t, "five deliveries", func() bool { return rcv.count() >= len(want) })
	time.Sleep(300 * time.Millisecond) // room for a wrong sixth (bob's) to arrive
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var got []string
	for i, b := range rcv.body {
		if err := webhook.Verify(ep.Secret, rcv.header[i].Get("Tickerdesk-Signature"), b, time.Minute); err != nil {
			t.Errorf("delivery %d: %v", i, err)
		}
		var ev struct {
			ID, Type string
			Data     struct{ Object struct{ ID string } }
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("delivery %d: %v: %s", i, err, b)
		}
		if ev.Data.Object.ID != n.ID || rcv.header[i].Get("Tickerdesk-Event-Id") != ev.ID {
			t.Errorf("delivery %d: %s with header id %q", i, b, rcv.header[i].Get("Tickerdesk-Event-Id"))
		}
		got = append(got, ev.Type)
	}
	// Order is not promised: compare as sets, each once.
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("receiver got %v, want each of %v once", got, want)
	}
}
