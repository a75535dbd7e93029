package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
)

func TestListing(t *testing.T) {
	e := newEnv(t)
	for i := range 25 {
		e.create(e.alice, "note "+strconv.Itoa(100+i), "body number "+strconv.Itoa(i)+" about marathon running")
	}
	// Tags come by PATCH, which covers merge patches on many notes.
	var all []noteJSON
	r := e.do(req{method: "GET", path: "/v1/notes", key: e.alice})
	r.json(t, &all)
	if len(all) != 25 || r.header.Get("X-Total-Count") != "" || r.header.Get("Link") != "" {
		t.Fatalf("unpaged list: %d notes, headers %v", len(all), r.header)
	}
	for i, n := range all {
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		if i%3 == 0 {
			tags = append(tags, "three")
		}
		e.do(req{method: "PATCH", path: "/v1/notes/" + n.Id, key: e.alice, body: mustJSON(map[string]any{"tags": tags}), contentType: "application/merge-patch+json"})
	}
	count := func(path string) (int, response) {
		var list []noteJSON
		r := e.do(req{method: "GET", path: path, key: e.alice})
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		r.json(t, &list)
		return len(list), r
	}
	if n, _ := count("/v1/notes?tag=even&tag=THREE"); n != 5 { // 0, 6, 12, 18, 24
		t.Errorf("tag=even&tag=three: %d notes, want 5", n)
	}
	if n, _ := count("/v1/notes?tag=even"); n != 13 {
		t.Errorf("tag=even: %d notes, want 13", n)
	}
	if n, _ := count("/v1/notes?q=" + "%22number+7%22"); n != 1 {
		t.Errorf("phrase search: %d notes, want 1", n)
	}
	if n, _ := count("/v1/notes?q=runs+marathons"); n != 25 {
		t.Errorf("stemmed search: %d notes, want 25", n)
	}
	n, r := count("/v1/notes?limit=10&offset=20&sort=-created_at")
	if n != 5 || r.header.Get("X-Total-Count") != "25" {
		t.Errorf("last page: %d notes, total %q", n, r.header.Get("X-Total-Count"))
	}
	link := r.header.Get("Link")
	for _, want := range []string{`rel="first"`, `rel="prev"`, `rel="last"`, "offset=10", "sort=-created_at"} {
		if !strings.Contains(link, want) {
			t.Errorf("Link %q lacks %s", link, want)
		}
	}
	if strings.Contains(link, `rel="next"`) {
		t.Errorf("Link on the last page has next: %s", link)
	}
	var page []noteJSON
	e.do(req{method: "GET", path: "/v1/notes?limit=3&sort=-created_at", key: e.alice}).json(t, &page)
	if page[0].Id != all[24].Id || page[2].Id != all[22].Id {
		t.Errorf("-created_at order wrong")
	}
	e.do(req{method: "GET", path: "/v1/notes?limit=2&sort=title", key: e.alice}).json(t, &page)
	if page[0].Title != "note 100" || page[1].Title != "note 101" {
		t.Errorf("title order: %+v", page)
	}
	e.do(req{method: "GET", path: "/v1/notes?limit=1&sort=-updated_at", key: e.alice}).json(t, &page)
	if page[0].Id != all[24].Id {
		t.Errorf("-updated_at: %s, want the last patched note", page[0].Id)
	}
}

func TestRouterErrorsAndAlias(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: "/v2/notes", key: e.alice})
	if r.status != 404 {
		t.Fatalf("unknown path: %d", r.status)
	}
	r.problem(t)
	r = e.do(req{method: "GET", path: "/v1/notes/", key: e.alice})
	if r.status != 404 {
		t.Errorf("trailing slash: %d", r.status)
	}
	for path, allow := range map[string][]string{"/v1/notes": {"GET", "POST"}, "/v1/notes/note_x": {"DELETE", "GET", "PATCH", "PUT"}, "/healthz": {"GET"}} {
		r = e.do(req{method: "TRACE", path: path, key: e.alice})
		if r.status != 405 {
			t.Fatalf("TRACE %s: %d", path, r.status)
		}
		r.problem(t)
		for _, m := range allow {
			if !strings.Contains(r.header.Get("Allow"), m) {
				t.Errorf("Allow %q for %s lacks %s", r.header.Get("Allow"), path, m)
			}
		}
	}
	// Ids that are not ids, traversal included, are simply not found.
	for _, id := range []string{"note_x", "..%2F..%2Fetc", "note_01ARZ3NDEKTSV4RRFFQ69G5FAV", "%27%20OR%201%3D1"} {
		if r := e.do(req{method: "GET", path: "/v1/notes/" + id, key: e.alice}); r.status != 404 {
			t.Errorf("GET /v1/notes/%s: %d", id, r.status)
		}
	}

	// The unversioned alias works, and says it is deprecated.
	r = e.do(req{method: "POST", path: "/notes", key: e.alice, body: `{"title":"old","content":"path"}`})
	n := r.note(t)
	if r.status != 201 || r.header.Get("Location") != "/v1/notes/"+n.Id || r.header.Get("Deprecation") == "" ||
		r.header.Get("Link") != `</v1/notes>; rel="successor-version"` {
		t.Fatalf("POST /notes: %d %v", r.status, r.header)
	}
	r = e.do(req{method: "GET", path: "/notes/" + n.Id, key: e.alice})
	if r.status != 200 || r.header.Get("Link") != `</v1/notes/`+n.Id+`>; rel="successor-version"` || r.header.Get("Deprecation") != "@1735689600" {
		t.Errorf("GET /notes/{id}: %d %v", r.status, r.header)
	}
	r = e.do(req{method: "GET", path: "/notes?limit=1", key: e.alice})
	if links := r.header.Values("Link"); len(links) != 2 {
		t.Errorf("paged alias list links = %q, want successor and pagination", links)
	}
	for _, m := range []req{
		{method: "PUT", path: "/notes/" + n.Id, body: `{"title":"t","content":""}`},
		{method: "PATCH", path: "/notes/" + n.Id, body: `{"content":"x"}`, contentType: "application/merge-patch+json"},
		{method: "DELETE", path: "/notes/" + n.Id},
	} {
		m.key = e.alice
		if r := e.do(m); r.status != 200 || r.header.Get("Deprecation") == "" {
			t.Errorf("%s %s: %d", m.method, m.path, r.status)
		}
	}
	r = e.do(req{method: "GET", path: "/notes"})
	if r.status != 401 || r.header.Get("Deprecation") == "" {
		t.Errorf("unauthenticated alias: %d %v", r.status, r.header)
	}
}

func TestOperability(t *testing.T) {
	e := newEnv(t)
	if r := e.do(req{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/readyz"}); r.status != 200 {
		t.Errorf("readyz: %d", r.status)
	}
	// Request ids: a valid one is echoed, a bad one replaced.
	r := e.do(req{method: "GET", path: "/v1/notes/nope", key: e.alice, headers: []string{"X-Request-ID", "trace-123"}})
	if r.header.Get("X-Request-ID") != "trace-123" || r.problem(t).RequestID != "trace-123" {
		t.Errorf("request id not echoed: %v", r.header)
	}
	long := strings.Repeat("x", 129)
	if r := e.do(req{method: "GET", path: "/healthz", headers: []string{"X-Request-ID", long}}); r.header.Get("X-Request-ID") == long || r.header.Get("X-Request-ID") == "" {
		t.Errorf("over-long request id echoed")
	}
	// The access log has the request id and a redacted URL, never content.
	e.create(e.alice, "t", "very secret content")
	e.do(req{method: "GET", path: "/v1/notes?access_key=leaked&q=secret+content&tag=secrettag", key: e.alice})
	logs := e.logs.String()
	if !strings.Contains(logs, `"request_id":"trace-123"`) || strings.Contains(logs, "leaked") || strings.Contains(logs, "secret") ||
		!strings.Contains(logs, "q=REDACTED&tag=REDACTED") {
		t.Errorf("access log: %s", logs)
	}
	// last_used_at is recorded in memory and written in a batch.
	if err := e.tracker.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys, err := e.store.ListKeys(context.Background(), "alice")
	if err != nil || keys[0].LastUsedAt == nil {
		t.Errorf("last_used_at not recorded: %+v, %v", keys, err)
	}

	r = e.do(req{method: "GET", path: "/metrics"})
	for _, want := range []string{`http_requests_total{method="GET",route="/v1/notes/:id",status="404"}`, "http_request_duration_seconds_bucket",
		`go_sql_max_open_connections{db_name="notes"} 30`, `notes_build_info{version="test"} 1`} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	r = e.do(req{method: "GET", path: "/v1/openapi.json"})
	want, _ := httpapi.OpenAPI()
	if r.status != 200 || string(r.body) != string(want) {
		t.Errorf("openapi.json: %d", r.status)
	}

	e.api.SetShuttingDown()
	r = e.do(req{method: "GET", path: "/readyz"})
	if r.status != 503 {
		t.Errorf("readyz while shutting down: %d", r.status)
	}
	r.problem(t)
	if r := e.do(req{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Errorf("healthz while shutting down: %d", r.status)
	}
}

func TestDatabaseFailures(t *testing.T) {
	e := newEnv(t, envOptions{statementTimeout: 300 * time.Millisecond})
	n := e.create(e.alice, "t", "c")
	// A slow database: another session holds the row lock, so the update
	// ends at the statement timeout with a 503, and health still answers.
	tx := testenv.OtherSession(t, e.url)
	if _, err := tx.Exec("SELECT 1 FROM notes WHERE id = $1 FOR UPDATE", n.Id); err != nil {
		t.Fatal(err)
	}
	r := e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"x","content":""}`})
	_ = tx.Rollback()
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("update of a locked note: %d %s", r.status, r.body)
	}
	if p := r.problem(t); strings.Contains(p.Detail, "SQLSTATE") || strings.Contains(p.Detail, "statement") {
		t.Errorf("problem leaks the driver error: %+v", p)
	}
	// The database gone: readiness fails, requests get 503, health lives.
	_ = e.db.Close()
	if r := e.do(req{method: "GET", path: "/readyz"}); r.status != 503 {
		t.Errorf("readyz without database: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/v1/notes", key: e.alice}); r.status != 503 && r.status != 500 {
		t.Errorf("list without database: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Errorf("healthz without database: %d", r.status)
	}
}

// TestValidatorCatchesDrift proves the OpenAPI checks can fail: a response
// that breaks the document is rejected.
func TestValidatorCatchesDrift(t *testing.T) {
	e := newEnv(t)
	n := e.create(e.alice, "t", "c")
	hr, _ := http.NewRequest("GET", e.srv.URL+"/v1/notes/"+n.Id, nil)
	hr.Header.Set("Authorization", "Bearer "+e.alice)
	bad := []response{
		{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":"` + n.Id + `","title":"t","content":"c","tags":null,"created_at":"x","updated_at":"x"}`)},
		{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"id":"` + n.Id + `","title":"t"}`)},
		{status: 418, header: http.Header{"Content-Type": {"application/problem+json"}}, body: []byte(`{}`)},
		{status: 404, header: http.Header{"Content-Type": {"application/problem+json"}}, body: []byte(`{"type":"x","title":"t","status":404}`)},
	}
	for i, resp := range bad {
		if err := validateResponse(t, hr, resp); err == nil {
			t.Errorf("bad response %d passed validation", i)
		}
	}
	good, err := e.srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Body.Close()
	body, _ := io.ReadAll(good.Body)
	if err := validateResponse(t, hr, response{status: good.StatusCode, header: good.Header, body: body}); err != nil {
		t.Errorf("good response failed validation: %v", err)
	}
}
