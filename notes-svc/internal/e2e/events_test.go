package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type eventJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Data      struct {
		Object map[string]any `json:"object"`
	} `json:"data"`
}

type eventPageJSON struct {
	Data       []eventJSON `json:"data"`
	NextCursor string      `json:"next_cursor"`
	HasMore    bool        `json:"has_more"`
}

// feed reads key's event feed after cursor ("" from the start) to its
// end, in pages of limit, and returns the events and the cursor to keep.
func (e *env) feed(key, cursor string, limit int) ([]eventJSON, string) {
	e.t.Helper()
	var out []eventJSON
	for {
		path := fmt.Sprintf("/v1/events?limit=%d", limit)
		if cursor != "" {
			path += "&after=" + url.QueryEscape(cursor)
		}
		r := e.do(req{method: "GET", path: path, key: key})
		if r.status != http.StatusOK {
			e.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		var page eventPageJSON
		r.json(e.t, &page)
		if page.NextCursor == "" {
			e.t.Fatalf("GET %s: no next_cursor", path)
		}
		out, cursor = append(out, page.Data...), page.NextCursor
		if !page.HasMore {
			return out, cursor
		}
	}
}

func eventTypes(evs []eventJSON) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// TestEventFeedFollowsEveryChange: a client that keeps its cursor sees
// each change once, in order, deletions included, and nothing of another
// account's.
func TestEventFeedFollowsEveryChange(t *testing.T) {
	e := newEnv(t)
	_, cursor := e.feed(e.alice, "", 10)
	n := e.create(e.alice, "first", "body")
	e.create(e.bob, "bob's", "private")
	step := func(r req, status int, want ...string) {
		t.Helper()
		if r.key == "" {
			r.key = e.alice
		}
		if got := e.do(r); got.status != status {
			t.Fatalf("%s %s: %d %s", r.method, r.path, got.status, got.body)
		}
		evs, next := e.feed(e.alice, cursor, 2)
		if got := eventTypes(evs); !slices.Equal(got, want) {
			t.Fatalf("after %s %s the feed shows %v, want %v", r.method, r.path, got, want)
		}
		for _, ev := range evs {
			if ev.Data.Object["id"] != n.Id {
				t.Errorf("%s event about %v, want %s", ev.Type, ev.Data.Object["id"], n.Id)
			}
		}
		cursor = next
	}
	step(req{method: "GET", path: "/v1/notes/" + n.Id}, 200, "note.created")
	step(req{method: "PUT", path: "/v1/notes/" + n.Id, body: `{"title":"second","content":"body"}`}, 200, "note.updated")
	step(req{method: "PATCH", path: "/v1/notes/" + n.Id, body: `{"title":"third"}`, contentType: "application/merge-patch+json"}, 200, "note.updated")
	step(req{method: "POST", path: "/v1/notes/" + n.Id + "/trash"}, 200, "note.trashed")
	step(req{method: "POST", path: "/v1/notes/" + n.Id + "/trash"}, 200)
	step(req{method: "POST", path: "/v1/notes/" + n.Id + "/restore"}, 200, "note.restored")
	step(req{method: "POST", path: "/v1/notes/" + n.Id + "/restore"}, 200)
	step(req{method: "DELETE", path: "/v1/notes/" + n.Id}, 200, "note.deleted")

	// From the start, the whole history, with the note as the API shows it.
	all, _ := e.feed(e.reader, "", 100)
	want := []string{"note.created", "note.updated", "note.updated", "note.trashed", "note.restored", "note.deleted"}
	if got := eventTypes(all); !slices.Equal(got, want) {
		t.Fatalf("alice's whole feed = %v, want %v", got, want)
	}
	if all[2].Data.Object["title"] != "third" || all[3].Data.Object["trashed_at"] == nil || all[4].Data.Object["trashed_at"] != nil {
		t.Errorf("event objects: %+v", all)
	}
	if len(all[5].Data.Object) != 1 {
		t.Errorf("the delete event's object = %v, want the id alone", all[5].Data.Object)
	}
	// The types filter, joined or repeated.
	for _, q := range []string{"types=note.updated,note.deleted", "types=note.updated&types=note.deleted"} {
		r := e.do(req{method: "GET", path: "/v1/events?" + q, key: e.alice})
		var page eventPageJSON
		r.json(t, &page)
		if got := eventTypes(page.Data); !slices.Equal(got, []string{"note.updated", "note.updated", "note.deleted"}) {
			t.Errorf("%s: %v", q, got)
		}
	}
	// Bob's feed shows his note only.
	bobs, _ := e.feed(e.bob, "", 100)
	if len(bobs) != 1 || bobs[0].Data.Object["title"] != "bob's" || strings.Contains(mustJSON(bobs), n.Id) {
		t.Errorf("bob's feed = %+v", bobs)
	}
	// Alice's cursor means nothing in bob's feed: never a page of hers.
	r := e.do(req{method: "GET", path: "/v1/events?after=" + url.QueryEscape(cursor), key: e.bob})
	if r.status != http.StatusGone || strings.Contains(string(r.body), n.Id) {
		t.Errorf("bob with alice's cursor: %d %s", r.status, r.body)
	}
}

func TestEventFeedRefusals(t *testing.T) {
	e := newEnv(t)
	e.create(e.alice, "a", "b")
	_, cursor := e.feed(e.alice, "", 10)
	cases := []struct {
		path   string
		status int
		typ    string
		field  string
	}{
		{"/v1/events?after=not-a-cursor", 400, "malformed-request", "after"},
		{"/v1/events?after=" + cursor + "&after=" + cursor, 400, "malformed-request", "after"},
		{"/v1/events?types=note.exploded", 422, "validation-failed", "types"},
		{"/v1/events?limit=1001", 422, "validation-failed", "limit"},
		{"/v1/events?offset=3", 422, "validation-failed", "offset"},
	}
	for _, c := range cases {
		r := e.do(req{method: "GET", path: c.path, key: e.alice})
		if r.status != c.status {
			t.Errorf("%s: %d %s", c.path, r.status, r.body)
			continue
		}
		p := r.problem(t)
		if !strings.HasSuffix(p.Type, c.typ) || !slices.Contains(p.fields(), c.field) {
			t.Errorf("%s: %+v", c.path, p)
		}
	}
	if r := e.do(req{method: "GET", path: "/v1/events"}); r.status != http.StatusUnauthorized {
		t.Errorf("no key: %d", r.status)
	}
}

// TestEventCursorExpiresAfterRetention: a cursor whose event is older than
// the retention is 410 cursor-expired, pruned or not; a fresh start works.
func TestEventCursorExpiresAfterRetention(t *testing.T) {
	e := newEnv(t)
	e.create(e.alice, "old", "b")
	_, cursor := e.feed(e.alice, "", 10)
	e.create(e.alice, "new", "b")
	if _, err := e.db.Exec(`UPDATE events SET created_at = now() - interval '31 days' WHERE data->'object'->>'title' = 'old'`); err != nil {
		t.Fatal(err)
	}
	r := e.do(req{method: "GET", path: "/v1/events?after=" + url.QueryEscape(cursor), key: e.alice})
	if r.status != http.StatusGone {
		t.Fatalf("a cursor past the retention: %d %s", r.status, r.body)
	}
	if p := r.problem(t); !strings.HasSuffix(p.Type, "/cursor-expired") {
		t.Errorf("problem %+v", p)
	}
	// The resync: the feed from its start no longer holds the old event.
	evs, _ := e.feed(e.alice, "", 10)
	if len(evs) != 1 || evs[0].Data.Object["title"] != "new" {
		t.Errorf("feed from the start = %+v", evs)
	}
}

// TestTrash covers the trash through the API: the note leaves listings
// and counts, refuses edits, comes back, is another account's 404, and
// is purged after the retention.
func TestTrash(t *testing.T) {
	e := newEnv(t)
	kept := e.create(e.alice, "kept", "b")
	n := e.create(e.alice, "binned", "b")
	r := e.do(req{method: "POST", path: "/v1/notes/" + n.Id + "/trash", key: e.alice})
	var trashed map[string]any
	r.json(t, &trashed)
	if r.status != 200 || trashed["trashed_at"] == nil || r.header.Get("ETag") != `"2"` {
		t.Fatalf("trash: %d %s %s", r.status, r.header.Get("ETag"), r.body)
	}
	// Another account's note is 404 whatever the operation.
	for _, op := range []string{"trash", "restore"} {
		if r := e.do(req{method: "POST", path: "/v1/notes/" + n.Id + "/" + op, key: e.bob}); r.status != 404 {
			t.Errorf("bob %s alice's note: %d", op, r.status)
		}
		if r := e.do(req{method: "POST", path: "/v1/notes/" + kept.Id + "/" + op, key: e.reader}); r.status != 403 {
			t.Errorf("%s with a read-only key: %d", op, r.status)
		}
	}
	// Edits are refused until it is restored; GET and DELETE are not.
	for _, w := range []req{
		{method: "PUT", path: "/v1/notes/" + n.Id, body: `{"title":"x","content":"y"}`},
		{method: "PATCH", path: "/v1/notes/" + n.Id, body: `{"title":"x"}`, contentType: "application/merge-patch+json"},
	} {
		w.key = e.alice
		r := e.do(w)
		if r.status != http.StatusConflict || !strings.HasSuffix(r.problem(t).Type, "/note-trashed") {
			t.Errorf("%s of a trashed note: %d %s", w.method, r.status, r.body)
		}
	}
	if r := e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice}); r.status != 200 || !strings.Contains(string(r.body), `"trashed_at":"20`) {
		t.Errorf("GET a trashed note: %d %s", r.status, r.body)
	}
	list := func(query string) ([]noteJSON, string) {
		t.Helper()
		r := e.do(req{method: "GET", path: "/v1/notes" + query, key: e.alice})
		var out []noteJSON
		r.json(t, &out)
		return out, r.header.Get("X-Total-Count")
	}
	if got, total := list("?limit=10"); len(got) != 1 || got[0].Id != kept.Id || total != "1" {
		t.Errorf("listing = %+v, total %s", got, total)
	}
	if got, total := list("?trashed=true&limit=10"); len(got) != 1 || got[0].Id != n.Id || total != "1" {
		t.Errorf("trashed listing = %+v, total %s", got, total)
	}
	if r := e.do(req{method: "GET", path: "/v1/notes?trashed=maybe", key: e.alice}); r.status != 422 || !slices.Contains(r.problem(t).fields(), "trashed") {
		t.Errorf("trashed=maybe: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "POST", path: "/v1/notes/" + n.Id + "/restore", key: e.alice})
	if r.status != 200 || !strings.Contains(string(r.body), `"trashed_at":null`) {
		t.Fatalf("restore: %d %s", r.status, r.body)
	}
	if got, _ := list(""); len(got) != 2 {
		t.Errorf("after restore the listing has %d notes", len(got))
	}

	// The purge takes the notes trashed before the retention, with their
	// note.deleted events, and leaves the others.
	e.do(req{method: "POST", path: "/v1/notes/" + n.Id + "/trash", key: e.alice})
	e.do(req{method: "POST", path: "/v1/notes/" + kept.Id + "/trash", key: e.alice})
	if _, err := e.db.Exec(`UPDATE notes SET trashed_at = now() - interval '31 days' WHERE id = $1`, n.Id); err != nil {
		t.Fatal(err)
	}
	_, cursor := e.feed(e.alice, "", 100)
	purged, err := e.store.PurgeTrash(t.Context(), time.Now().Add(-30*24*time.Hour))
	if err != nil || purged != 1 {
		t.Fatalf("purge: %d, %v", purged, err)
	}
	if r := e.do(req{method: "GET", path: "/v1/notes/" + n.Id, key: e.alice}); r.status != 404 {
		t.Errorf("a purged note: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/v1/notes/" + kept.Id, key: e.alice}); r.status != 200 {
		t.Errorf("a note trashed lately: %d", r.status)
	}
	evs, _ := e.feed(e.alice, cursor, 10)
	if len(evs) != 1 || evs[0].Type != "note.deleted" || evs[0].Data.Object["id"] != n.Id {
		t.Errorf("events of the purge: %+v", evs)
	}
}

var nextLink = regexp.MustCompile(`<([^>]*)>; rel="next"`)

// TestCursorWalkUnderConcurrentWrites walks the listing by its next links
// while notes are created, edited and deleted: every note that exists for
// the whole walk is seen exactly once, and no note twice.
func TestCursorWalkUnderConcurrentWrites(t *testing.T) {
	for _, sort := range []string{"created_at", "-created_at"} {
		t.Run(sort, func(t *testing.T) {
			e := newEnv(t)
			e.seedNotes(e.aliceID, 0, 150, 20)
			var all []noteJSON
			e.do(req{method: "GET", path: "/v1/notes", key: e.alice}).json(t, &all)
			stable := map[string]bool{}
			var doomed []string
			for i, n := range all {
				if i%5 == 0 {
					doomed = append(doomed, n.Id)
				} else {
					stable[n.Id] = true
				}
			}
			// The writer runs between the pages: it edits stable notes,
			// deletes doomed ones and creates new ones. It reports its
			// failures to the test's goroutine, which alone may end the test.
			var wg sync.WaitGroup
			pages := make(chan int)
			var failures []string
			send := func(method, path, ct, body string, want int) {
				hr, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
				hr.Header.Set("Authorization", "Bearer "+e.alice)
				if body != "" {
					hr.Header.Set("Content-Type", ct)
				}
				resp, err := e.srv.Client().Do(hr)
				if err != nil {
					failures = append(failures, fmt.Sprintf("%s %s: %v", method, path, err))
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode != want {
					failures = append(failures, fmt.Sprintf("%s %s: %d", method, path, resp.StatusCode))
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				i := 0
				for range pages {
					for j := 0; j < 3; j++ {
						id := all[(i*7+j*13)%len(all)].Id
						if stable[id] {
							send("PATCH", "/v1/notes/"+id, "application/merge-patch+json", fmt.Sprintf(`{"title":"edited %d"}`, i), 200)
						}
					}
					if i < len(doomed) {
						send("DELETE", "/v1/notes/"+doomed[i], "", "", 200)
					}
					send("POST", "/v1/notes", "application/json", fmt.Sprintf(`{"title":"new %d","content":"c"}`, i), 201)
					i++
				}
			}()
			seen := map[string]int{}
			path := "/v1/notes?limit=7&sort=" + sort
			for walked := 0; path != ""; walked++ {
				if walked > 200 {
					t.Fatal("the walk does not end")
				}
				r := e.do(req{method: "GET", path: path, key: e.alice})
				if r.status != 200 {
					t.Fatalf("GET %s: %d %s", path, r.status, r.body)
				}
				var page []noteJSON
				r.json(t, &page)
				for _, n := range page {
					seen[n.Id]++
				}
				path = ""
				if m := nextLink.FindStringSubmatch(r.header.Get("Link")); m != nil {
					path = m[1]
					if !strings.Contains(path, "starting_after=") {
						t.Fatalf("next link %s does not continue by cursor", path)
					}
				}
				pages <- walked
			}
			close(pages)
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("concurrent writes failed: %v", failures)
			}
			for id, times := range seen {
				if times > 1 {
					t.Errorf("note %s seen %d times", id, times)
				}
			}
			for id := range stable {
				if seen[id] != 1 {
					t.Errorf("stable note %s seen %d times", id, seen[id])
				}
			}
		})
	}
}

func TestStartingAfter(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, e.create(e.alice, fmt.Sprintf("n%d", i), "c").Id)
	}
	// A note id works as Stripe's starting_after does.
	var page []noteJSON
	r := e.do(req{method: "GET", path: "/v1/notes?limit=2&starting_after=" + ids[1], key: e.alice})
	r.json(t, &page)
	if len(page) != 2 || page[0].Id != ids[2] || page[1].Id != ids[3] {
		t.Fatalf("page after %s = %+v", ids[1], page)
	}
	m := nextLink.FindStringSubmatch(r.header.Get("Link"))
	if m == nil {
		t.Fatalf("no next link: %q", r.header.Get("Link"))
	}
	e.do(req{method: "GET", path: m[1], key: e.alice}).json(t, &page)
	if len(page) != 1 || page[0].Id != ids[4] {
		t.Fatalf("the next page = %+v", page)
	}
	// The last page has no next link.
	r = e.do(req{method: "GET", path: "/v1/notes?limit=2&starting_after=" + ids[2], key: e.alice})
	if strings.Contains(r.header.Get("Link"), `rel="next"`) {
		t.Errorf("the last page links to a next: %s", r.header.Get("Link"))
	}
	bobs := e.create(e.bob, "bob's", "c")
	for _, q := range []string{
		"sort=updated_at&starting_after=" + ids[0],
		"sort=title&limit=2&starting_after=" + ids[0],
		"offset=1&starting_after=" + ids[0],
		"starting_after=garbage",
		"starting_after=" + bobs.Id, // another account's note is no place in alice's
		"sort=relevance",
	} {
		r := e.do(req{method: "GET", path: "/v1/notes?" + q, key: e.alice})
		if r.status != 400 {
			t.Errorf("%s: %d %s", q, r.status, r.body)
			continue
		}
		want := "starting_after"
		if q == "sort=relevance" {
			want = "sort"
		}
		if p := r.problem(t); !slices.Equal(p.fields(), []string{want}) {
			t.Errorf("%s: %+v", q, p)
		}
	}
}

func TestRelevanceOrder(t *testing.T) {
	e := newEnv(t)
	inContent := e.create(e.alice, "plain", "a zebra walks")
	inTitle := e.create(e.alice, "zebra crossing", "nothing here")
	twinA := e.create(e.alice, "twin", "zebra")
	twinB := e.create(e.alice, "twin", "zebra")
	e.create(e.alice, "unrelated", "horse")
	e.create(e.bob, "zebra", "zebra zebra")
	var got []noteJSON
	e.do(req{method: "GET", path: "/v1/notes?q=zebra&sort=relevance", key: e.alice}).json(t, &got)
	var ids []string
	for _, n := range got {
		ids = append(ids, n.Id)
	}
	// The title match ranks first; equal ranks go by id.
	if len(ids) != 4 || ids[0] != inTitle.Id {
		t.Fatalf("relevance order = %v; title match %s", ids, inTitle.Id)
	}
	rest := ids[1:]
	i, j := slices.Index(rest, twinA.Id), slices.Index(rest, twinB.Id)
	if !slices.Contains(rest, inContent.Id) || i < 0 || j != i+1 {
		t.Errorf("relevance order = %v: twins %s, %s adjacent in id order", ids, twinA.Id, twinB.Id)
	}
	// Paged, it is the same order.
	var page []noteJSON
	e.do(req{method: "GET", path: "/v1/notes?q=zebra&sort=relevance&limit=2&offset=1", key: e.alice}).json(t, &page)
	if len(page) != 2 || page[0].Id != ids[1] || page[1].Id != ids[2] {
		t.Errorf("page 2 = %+v, want %v", page, ids[1:3])
	}
}
