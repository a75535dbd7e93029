package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

func TestNoteLifecycle(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: `{"title":"Groceries","content":"milk","tags":["Home"," home ","errands"]}`})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	n := r.note(t)
	if r.header.Get("Location") != "/v1/notes/"+n.Id || r.header.Get("ETag") != `"1"` || !slices.Equal(n.Tags, []string{"home", "errands"}) || n.CreatedAt != n.UpdatedAt {
		t.Fatalf("created %+v with headers %v", n, r.header)
	}
	if _, err := time.Parse("2006-01-02T15:04:05Z", n.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", n.CreatedAt, err)
	}

	r = e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice})
	if r.status != 200 || r.note(t).Content != "milk" || r.header.Get("ETag") != `"1"` {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice, headers: []string{"If-None-Match", `"1"`}})
	if r.status != 304 || len(r.body) != 0 || r.header.Get("ETag") != `"1"` {
		t.Fatalf("conditional get: %d %q", r.status, r.body)
	}

	r = e.do(req{method: "GET", path: "/v1/notes", key: e.alice})
	var list []noteJSON
	r.json(t, &list)
	if r.status != 200 || len(list) != 1 || list[0].Id != n.Id {
		t.Fatalf("list: %d %s", r.status, r.body)
	}

	// PUT without tags keeps them.
	r = e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"Groceries","content":"milk, eggs"}`})
	if got := r.note(t); r.status != 200 || got.Content != "milk, eggs" || !slices.Equal(got.Tags, []string{"home", "errands"}) || r.header.Get("ETag") != `"2"` {
		t.Fatalf("put without tags: %d %s", r.status, r.body)
	}
	// PUT with tags replaces them.
	r = e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"Groceries","content":"milk, eggs","tags":["shop"]}`,
		headers: []string{"If-Match", `"2"`}})
	if got := r.note(t); r.status != 200 || !slices.Equal(got.Tags, []string{"shop"}) {
		t.Fatalf("put with tags: %d %s", r.status, r.body)
	}
	// PATCH changes only what it names; tags null removes them.
	r = e.do(req{method: "PATCH", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"Shopping","tags":null}`, contentType: "application/merge-patch+json"})
	if got := r.note(t); r.status != 200 || got.Title != "Shopping" || got.Content != "milk, eggs" || len(got.Tags) != 0 || r.header.Get("ETag") != `"4"` {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "PATCH", path: "/v1/notes/" + n.Id, key: e.alice, body: `{}`, contentType: "application/merge-patch+json"})
	if r.status != 200 || r.header.Get("ETag") != `"4"` {
		t.Fatalf("empty patch: %d %s %v", r.status, r.body, r.header)
	}

	r = e.do(req{method: "DELETE", path: "/v1/notes/" + n.Id, key: e.alice, headers: []string{"If-Match", `"3"`}})
	if r.status != 412 {
		t.Fatalf("stale delete: %d", r.status)
	}
	r.problem(t)
	r = e.do(req{method: "DELETE", path: "/v1/notes/" + n.Id, key: e.alice})
	var del struct{ Message, ID string }
	r.json(t, &del)
	if r.status != 200 || del.ID != n.Id || del.Message == "" {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		r = e.do(req{method: m, path: "/v1/notes/" + n.Id, key: e.alice})
		if r.status != 404 {
			t.Errorf("%s after delete: %d", m, r.status)
		}
		r.problem(t)
	}
	r = e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"x","content":""}`})
	if r.status != 404 {
		t.Errorf("put after delete: %d", r.status)
	}
	r = e.do(req{method: "PATCH", path: "/v1/notes/" + n.Id, key: e.alice, body: `{"title":"x"}`, contentType: "application/merge-patch+json"})
	if r.status != 404 {
		t.Errorf("patch after delete: %d", r.status)
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, expired, err := e.store.CreateKey(ctx, "alice", keystore.KeyOptions{ExpiresAt: time.Now().Add(-time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	revokedKey, revoked, err := e.store.CreateKey(ctx, "alice", keystore.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(req{method: "GET", path: "/v1/notes", key: revoked}); r.status != 200 {
		t.Fatalf("key before revocation: %d", r.status)
	}
	if err := e.store.RevokeKey(ctx, revokedKey.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"missing":       nil,
		"not bearer":    {"Authorization", "Basic dXNlcjpwYXNz"},
		"empty bearer":  {"Authorization", "Bearer "},
		"malformed":     {"Authorization", "Bearer tdn_nope"},
		"bad checksum":  {"Authorization", "Bearer " + e.alice[:len(e.alice)-1] + "x"},
		"other service": {"Authorization", "Bearer tdm_" + e.alice[4:]},
		"expired":       {"Authorization", "Bearer " + expired},
		"revoked":       {"Authorization", "Bearer " + revoked},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			r := e.doT(t, req{method: "GET", path: "/v1/notes", headers: h})
			if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("status %d, WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
			}
			r.problem(t)
		})
	}
	// A read-only key reads but cannot write.
	if r := e.do(req{method: "GET", path: "/v1/notes", key: e.reader}); r.status != 200 {
		t.Errorf("read-only list: %d", r.status)
	}
	r := e.do(req{method: "POST", path: "/v1/notes", key: e.reader, body: `{"title":"t","content":""}`})
	if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), "insufficient_scope") {
		t.Errorf("read-only create: %d %v", r.status, r.header)
	}
	r.problem(t)
	// Keys never reach the log.
	if logs := e.logs.String(); strings.Contains(logs, e.alice[4:20]) || strings.Contains(logs, expired[4:20]) || strings.Contains(logs, "dXNlcjpwYXNz") {
		t.Error("a credential reached the log")
	}
}

func TestRequestErrors(t *testing.T) {
	e := newEnv(t)
	n := e.create(e.alice, "t", "c")
	huge := `{"title":"t","content":"` + strings.Repeat("a", 1<<20) + `"}`
	cases := []struct {
		name   string
		r      req
		status int
		fields []string
	}{
		{"malformed JSON", req{method: "POST", path: "/v1/notes", body: `{"title":`}, 400, []string{"body"}},
		{"trailing data", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":""}{}`}, 400, []string{"body"}},
		{"JSON nested 10000 deep", req{method: "POST", path: "/v1/notes", body: `{"title":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`}, 400, []string{"body"}},
		{"wrong content type", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":""}`, contentType: "text/plain"}, 415, []string{"Content-Type"}},
		{"wrong charset", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":""}`, contentType: "application/json; charset=latin1"}, 415, []string{"Content-Type"}},
		{"patch as json", req{method: "PATCH", path: "/v1/notes/" + n.Id, body: `{"title":"t"}`}, 415, []string{"Content-Type"}},
		{"put as merge patch", req{method: "PUT", path: "/v1/notes/" + n.Id, body: `{"title":"t","content":""}`, contentType: "application/merge-patch+json"}, 415, []string{"Content-Type"}},
		{"body over 1 MiB", req{method: "POST", path: "/v1/notes", body: huge}, 413, []string{"body"}},
		{"missing fields", req{method: "POST", path: "/v1/notes", body: `{}`}, 422, []string{"title", "content"}},
		{"every limit", req{method: "POST", path: "/v1/notes", body: mustJSON(map[string]any{"title": strings.Repeat("x", 201), "content": strings.Repeat("y", 102401), "tags": []string{"ok", "", strings.Repeat("z", 65)}})}, 422, []string{"title", "content", "tags[1]", "tags[2]"}},
		{"too many tags", req{method: "POST", path: "/v1/notes", body: mustJSON(map[string]any{"title": "t", "content": "", "tags": make([]string, 33)})}, 422, []string{"tags"}},
		{"unknown field", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":"","created_at":"2020-01-01T00:00:00Z"}`}, 422, []string{"created_at"}},
		{"wrong type", req{method: "PUT", path: "/v1/notes/" + n.Id, body: `{"title":["t"],"content":""}`}, 422, []string{"title"}},
		{"invalid UTF-8", req{method: "POST", path: "/v1/notes", body: "{\"title\":\"t\",\"content\":\"\xc3\x28\"}"}, 422, []string{"content"}},
		{"escaped NUL", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":"a\u0000b"}`}, 422, []string{"content"}},
		{"raw NUL", req{method: "POST", path: "/v1/notes", body: "{\"title\":\"t\x00\",\"content\":\"\"}"}, 422, []string{"title"}},
		{"title null in patch", req{method: "PATCH", path: "/v1/notes/" + n.Id, body: `{"title":null}`, contentType: "application/merge-patch+json"}, 422, []string{"title"}},
		{"bad idempotency key", req{method: "POST", path: "/v1/notes", body: `{"title":"t","content":""}`, headers: []string{"Idempotency-Key", strings.Repeat("k", 300)}}, 400, []string{"Idempotency-Key"}},
		{"bad limit", req{method: "GET", path: "/v1/notes?limit=0&offset=-1"}, 422, []string{"limit", "offset"}},
		{"huge limit", req{method: "GET", path: "/v1/notes?limit=1001"}, 422, []string{"limit"}},
		{"text limit", req{method: "GET", path: "/v1/notes?limit=ten"}, 422, []string{"limit"}},
		{"bad sort", req{method: "GET", path: "/v1/notes?sort=id"}, 422, []string{"sort"}},
		{"semicolon in query", req{method: "GET", path: "/v1/notes?sort=title;drop"}, 400, []string{"query"}},
		{"bad escape in query", req{method: "GET", path: "/v1/notes?q=%zz"}, 400, []string{"query"}},
		{"repeated q", req{method: "GET", path: "/v1/notes?q=a&q=b"}, 422, []string{"q"}},
		{"empty tag", req{method: "GET", path: "/v1/notes?tag=a&tag="}, 422, []string{"tag[1]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.r.key = e.alice
			r := e.doT(t, c.r)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, c.status, r.body)
			}
			if p := r.problem(t); !slices.Equal(p.fields(), c.fields) {
				t.Errorf("error fields %v, want %v", p.fields(), c.fields)
			}
			if c.status == 415 && c.r.method == "PATCH" && r.header.Get("Accept-Patch") != "application/merge-patch+json" {
				t.Error("415 on PATCH without Accept-Patch")
			}
		})
	}
	// Nothing was stored by the failed requests.
	var list []noteJSON
	e.do(req{method: "GET", path: "/v1/notes", key: e.alice}).json(t, &list)
	if len(list) != 1 || list[0].Title != "t" || list[0].Content != "c" {
		t.Errorf("notes after failed requests: %+v", list)
	}
}

func TestContentSizeLimit(t *testing.T) {
	e := newEnv(t)
	// Exactly 102400 bytes, with multi-byte characters at the end.
	content := strings.Repeat("a", notes.MaxContentLen-4) + "🎉"
	n := e.create(e.alice, strings.Repeat("é", 200), content)
	r := e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice})
	if got := r.note(t); got.Content != content || len(got.Content) != 102400 {
		t.Fatalf("content of %d bytes came back as %d bytes", len(content), len(got.Content))
	}
	r = e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: mustJSON(map[string]string{"title": "t", "content": content + "a"})})
	if r.status != 422 || !slices.Equal(r.problem(t).fields(), []string{"content"}) {
		t.Fatalf("one byte over: %d %s", r.status, r.body)
	}
}

func TestUnicodeRoundTrip(t *testing.T) {
	e := newEnv(t)
	title := "Ünïcödé 🎉👩‍👩‍👧 日本語 مرحبا שלום"
	content := "emoji 🎉🇺🇦👍🏽\nCJK 中文 日本語 한국어\nRTL مرحبا بالعالم שלום עולם\u200f\ncombining e\u0301 vs é\n<b>&amp;</b> \"quotes\" \\ back\u2028sep\ttab\r\nend"
	tags := []string{"日本", "עברית", "🎉"}
	n := e.create(e.alice, title, content, tags...)
	for _, path := range []string{"/v1/notes/" + n.Id, "/v1/notes"} {
		r := e.do(req{method: "GET", path: path, key: e.alice})
		var got noteJSON
		if path == "/v1/notes" {
			var list []noteJSON
			r.json(t, &list)
			got = list[0]
		} else {
			got = r.note(t)
		}
		if got.Title != title || got.Content != content || !slices.Equal(got.Tags, tags) {
			t.Errorf("%s: round trip changed the text:\n got %q %q %q\nwant %q %q %q", path, got.Title, got.Content, got.Tags, title, content, tags)
		}
		// Sent as UTF-8, not as escapes.
		if !strings.Contains(string(r.body), "👩‍👩‍👧") || !strings.Contains(string(r.body), "<b>&amp;</b>") {
			t.Errorf("%s: body escapes the text: %s", path, r.body)
		}
	}
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	a := e.create(e.alice, "alice's", "private", "secret")
	p := "/v1/notes/" + a.Id
	for _, r := range []req{
		{method: "GET", path: p},
		{method: "GET", path: p, headers: []string{"If-None-Match", "*"}},
		{method: "PUT", path: p, body: `{"title":"pwned","content":"x","tags":[]}`},
		{method: "PUT", path: p, body: `{"title":"pwned","content":"x"}`, headers: []string{"If-Match", `"1"`}},
		{method: "PATCH", path: p, body: `{"content":"x"}`, contentType: "application/merge-patch+json"},
		{method: "PATCH", path: p, body: `{"content":"x"}`, contentType: "application/merge-patch+json", headers: []string{"If-Match", "*"}},
		{method: "DELETE", path: p},
		{method: "DELETE", path: p, headers: []string{"If-Match", `"1"`}},
		{method: "GET", path: "/notes/" + a.Id},
		{method: "DELETE", path: "/notes/" + a.Id},
	} {
		r.key = e.bob
		resp := e.do(r)
		if resp.status != 404 {
			t.Errorf("bob %s %s: %d, want 404", r.method, r.path, resp.status)
		}
		resp.problem(t)
	}
	for _, q := range []string{"", "?tag=secret", "?q=private", "?limit=10"} {
		r := e.do(req{method: "GET", path: "/v1/notes" + q, key: e.bob})
		if strings.TrimSpace(string(r.body)) != "[]" {
			t.Errorf("bob's list%s = %s", q, r.body)
		}
		if q == "?limit=10" && r.header.Get("X-Total-Count") != "0" {
			t.Errorf("bob's total = %q", r.header.Get("X-Total-Count"))
		}
	}
	// Bob's own note with the same idempotency key does not collide.
	r := e.do(req{method: "GET", path: p, key: e.alice})
	if got := r.note(t); (got.Title != a.Title || got.Content != a.Content || !slices.Equal(got.Tags, a.Tags) || got.UpdatedAt != a.UpdatedAt) || r.header.Get("ETag") != `"1"` {
		t.Errorf("alice's note changed: %+v, ETag %s", got, r.header.Get("ETag"))
	}
}

func TestConcurrentPutsWithSameIfMatch(t *testing.T) {
	e := newEnv(t)
	n := e.create(e.alice, "t", "c")
	const writers = 20
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			r := e.do(req{method: "PUT", path: "/v1/notes/" + n.Id, key: e.alice, body: fmt.Sprintf(`{"title":"writer %d","content":"c"}`, i),
				headers: []string{"If-Match", `"1"`}})
			statuses[i] = r.status
		})
	}
	wg.Wait()
	ok, failed := 0, 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 412:
			failed++
		}
	}
	if ok != 1 || failed != writers-1 {
		t.Fatalf("statuses %v: %d× 200 and %d× 412, want 1 and %d", statuses, ok, failed, writers-1)
	}
	r := e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice})
	if r.header.Get("ETag") != `"2"` || !strings.HasPrefix(r.note(t).Title, "writer ") {
		t.Errorf("after the race: ETag %s, %s", r.header.Get("ETag"), r.body)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	body := `{"title":"pay once","content":"c"}`
	first := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: body, headers: []string{"Idempotency-Key", "order-42"}})
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v", first.status, first.header)
	}
	again := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: body, headers: []string{"Idempotency-Key", `"order-42"`}})
	if again.status != 201 || string(again.body) != string(first.body) || again.header.Get("Location") != first.header.Get("Location") ||
		again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s %v, want %s", again.status, again.body, again.header, first.body)
	}
	r := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: `{"title":"pay twice","content":"c"}`, headers: []string{"Idempotency-Key", "order-42"}})
	if r.status != 422 || !slices.Equal(r.problem(t).fields(), []string{"Idempotency-Key"}) {
		t.Fatalf("different body: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "POST", path: "/v1/notes", key: e.bob, body: body, headers: []string{"Idempotency-Key", "order-42"}}); r.status != 201 || r.note(t).Id == first.note(t).Id {
		t.Fatalf("same key for bob: %d %s", r.status, r.body)
	}

	// A request still in flight holds the key: a duplicate gets 409.
	tx := testenv.OtherSession(t, e.url)
	if _, err := tx.Exec("SELECT pg_advisory_xact_lock($1)", notes.IdempotencyRecord{Key: "busy"}.LockID(e.aliceID)); err != nil {
		t.Fatal(err)
	}
	r = e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: body, headers: []string{"Idempotency-Key", "busy"}})
	_ = tx.Rollback()
	if r.status != 409 {
		t.Fatalf("in flight: %d %s", r.status, r.body)
	}
	r.problem(t)

	// Retries racing each other create exactly one note.
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: `{"title":"race","content":""}`, headers: []string{"Idempotency-Key", "race"}}).status
		})
	}
	wg.Wait()
	for _, s := range statuses {
		if s != 201 && s != 409 {
			t.Errorf("racing retry answered %d", s)
		}
	}
	var list []noteJSON
	e.do(req{method: "GET", path: "/v1/notes?q=race", key: e.alice}).json(t, &list)
	if len(list) != 1 {
		t.Errorf("racing retries created %d notes, want 1", len(list))
	}
}

// TestPinned: pinned is false unless sent, POST, PUT and PATCH set it (a
// PUT without it unpins, a PATCH without it keeps it), pinned=true and
// pinned=false filter listings, and sort=-pinned,-updated_at puts the
// pinned notes first, each group newest first, through every keyset batch.
func TestPinned(t *testing.T) {
	e := newEnv(t)
	type pinnedNote struct {
		ID     string `json:"id"`
		Pinned bool   `json:"pinned"`
	}
	create := func(body string) pinnedNote {
		t.Helper()
		r := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: body})
		var n pinnedNote
		r.json(t, &n)
		if r.status != 201 {
			t.Fatalf("create %s: %d %s", body, r.status, r.body)
		}
		return n
	}
	write := func(method, id, body string, want bool) {
		t.Helper()
		ct := ""
		if method == "PATCH" {
			ct = "application/merge-patch+json"
		}
		r := e.do(req{method: method, path: "/v1/notes/" + id, key: e.alice, body: body, contentType: ct})
		var n pinnedNote
		r.json(t, &n)
		if r.status != 200 || n.Pinned != want {
			t.Fatalf("%s %s: %d %s, want pinned %v", method, body, r.status, r.body, want)
		}
	}
	plain := create(`{"title":"plain","content":""}`)
	if plain.Pinned {
		t.Fatal("a note created without pinned is pinned")
	}
	pinned := create(`{"title":"pinned","content":"","pinned":true}`)
	if !pinned.Pinned {
		t.Fatal("a note created pinned is not")
	}
	write("PATCH", plain.ID, `{"pinned":true}`, true)
	write("PATCH", plain.ID, `{"title":"still pinned"}`, true)
	write("PUT", plain.ID, `{"title":"plain","content":""}`, false)
	write("PUT", plain.ID, `{"title":"plain","content":"","pinned":true}`, true)
	write("PATCH", plain.ID, `{"pinned":null}`, false)
	r := e.do(req{method: "POST", path: "/v1/notes", key: e.alice, body: `{"title":"t","content":"","pinned":"yes"}`})
	if r.status != 422 || !strings.Contains(string(r.body), "pinned") {
		t.Fatalf("pinned \"yes\": %d %s", r.status, r.body)
	}

	// Seven more, every third pinned, each created after the last.
	for i := range 7 {
		create(fmt.Sprintf(`{"title":"n%d","content":"","pinned":%v}`, i, i%3 == 0))
	}
	var all []pinnedNote
	r = e.do(req{method: "GET", path: "/v1/notes", key: e.alice})
	r.json(t, &all)
	ids := func(path string) []string {
		t.Helper()
		var got []pinnedNote
		r := e.do(req{method: "GET", path: path, key: e.alice})
		r.json(t, &got)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var out []string
		for _, n := range got {
			out = append(out, n.ID)
		}
		return out
	}
	var wantPinned, wantOther []string
	for _, n := range all {
		if n.Pinned {
			wantPinned = append(wantPinned, n.ID)
		} else {
			wantOther = append(wantOther, n.ID)
		}
	}
	if got := ids("/v1/notes?pinned=true"); !slices.Equal(got, wantPinned) || len(got) != 4 {
		t.Errorf("pinned=true: %v, want %v", got, wantPinned)
	}
	if got := ids("/v1/notes?pinned=false"); !slices.Equal(got, wantOther) || len(got) != 5 {
		t.Errorf("pinned=false: %v, want %v", got, wantOther)
	}
	// Creation order is updated_at order, but for plain (written last,
	// unpinned), which only the pinned group's order below ignores.
	newest := func(l []string) []string {
		out := slices.Clone(l)
		slices.Reverse(out)
		return out
	}
	wantOther = newest(wantOther)
	wantPinned = newest(wantPinned)
	wantSorted := append(slices.Clone(wantPinned), wantOther...)
	got := ids("/v1/notes?sort=-pinned,-updated_at")
	if len(got) != len(wantSorted) || !slices.Equal(got[:4], wantPinned) {
		t.Errorf("sort=-pinned,-updated_at: %v, want the pinned %v first", got, wantPinned)
	}
	// Pages of 2 walk the same order.
	var paged []string
	for off := 0; off < len(got); off += 2 {
		paged = append(paged, ids(fmt.Sprintf("/v1/notes?sort=-pinned,-updated_at&limit=2&offset=%d", off))...)
	}
	if !slices.Equal(paged, got) {
		t.Errorf("paged -pinned,-updated_at: %v, want %v", paged, got)
	}
	if got := ids("/v1/notes?sort=pinned,-updated_at"); len(got) != 9 || !slices.Equal(got[5:], wantPinned) || !slices.Contains(got[:5], plain.ID) {
		t.Errorf("sort=pinned,-updated_at: %v, want the others first, then %v", got, wantPinned)
	}
	for _, bad := range []string{"pinned=yes", "sort=-pinned,-pinned", "sort=pinned,title,-created_at,updated_at"} {
		if r := e.do(req{method: "GET", path: "/v1/notes?" + bad, key: e.alice}); r.status != 422 {
			t.Errorf("%s: %d %s, want 422", bad, r.status, r.body)
		}
	}
}
