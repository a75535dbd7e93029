package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// together runs n calls of f at once: all goroutines wait on one gate.
func together(n int, f func(i int)) {
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-gate
			f(i)
		})
	}
	close(gate)
	wg.Wait()
}

// ConcurrentIfMatch races writers carrying the same If-Match: exactly one
// wins each round and the stored note is the winner's.
func ConcurrentIfMatch(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Concurrent writers: If-Match (notes-svc PUT and PATCH)")
	const rounds, writers = 6, 20
	note, _, err := e.CreateNote(e.NotesKeyA, "race target", e.NoteContent("initial"), nil)
	if err != nil {
		s.Check("setup", false, "%v", err)
		return
	}
	lost, wrongWinners := 0, 0
	statuses := map[int]int{}
	for round := range rounds {
		snap, err := e.SnapshotNote(e.NotesKeyA, note.ID)
		if err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
		method := http.MethodPut
		if round%2 == 1 {
			method = http.MethodPatch
		}
		contents := make([]string, writers)
		codes := make([]int, writers)
		for i := range contents {
			contents[i] = e.NoteContent(fmt.Sprintf("round %d writer %d", round, i))
		}
		together(writers, func(i int) {
			body, _ := json.Marshal(map[string]string{"title": "race target", "content": contents[i]})
			hdr := map[string]string{"If-Match": snap.ETag}
			if method == http.MethodPatch {
				hdr["Content-Type"] = "application/merge-patch+json"
			}
			resp, err := e.Do(e.NotesRequest(method, "/v1/notes/"+note.ID, e.NotesKeyA, body, hdr))
			if err == nil {
				codes[i] = resp.Status
			}
		})
		winners := []int{}
		for i, c := range codes {
			statuses[c]++
			if c == http.StatusOK {
				winners = append(winners, i)
			}
		}
		s.Sent += writers
		if len(winners) != 1 {
			wrongWinners++
			continue
		}
		_, got, err := e.GetNote(e.NotesKeyA, note.ID)
		if err != nil || got.Content != contents[winners[0]] {
			lost++
		}
	}
	others := 0
	for c, n := range statuses {
		if c != 200 && c != 412 && c != 409 {
			others += n
		}
	}
	s.Failed = lost + wrongWinners + others
	s.Outcomes = statusString(statuses)
	s.Check("exactly one writer wins each round", wrongWinners == 0, "%d of %d rounds had a number of winners other than one", wrongWinners, rounds)
	s.Check("no lost update: the stored note is the winner's", lost == 0, "%d rounds stored another writer's content", lost)
	s.Check("losers get 412 (or 409)", others == 0, "%s", statusString(statuses))
}

// ConcurrentIdempotency retries one POST many times at once with the same
// Idempotency-Key: one note is created, every success replays it.
func ConcurrentIdempotency(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Concurrent writers: retried POST with one Idempotency-Key (notes-svc)")
	const rounds, retries = 5, 20
	statuses := map[int]int{}
	dupRounds, mismatch := 0, 0
	for round := range rounds {
		title := Marker("idem-title")
		key := Marker("idem-key")
		body, _ := json.Marshal(map[string]any{"title": title, "content": e.NoteContent("idempotent"), "tags": []string{"idem"}})
		ids := make([]string, retries+3)
		codes := make([]int, retries+3)
		call := func(i int) {
			resp, err := e.Do(e.NotesRequest(http.MethodPost, "/v1/notes", e.NotesKeyA, body, map[string]string{"Idempotency-Key": key}))
			if err != nil {
				return
			}
			codes[i] = resp.Status
			var n Note
			if resp.Status == http.StatusCreated && json.Unmarshal(resp.Body, &n) == nil {
				ids[i] = n.ID
			}
		}
		together(retries, call)
		// Later sequential retries replay the stored answer.
		for i := retries; i < retries+3; i++ {
			call(i)
		}
		s.Sent += retries + 3
		distinct := map[string]bool{}
		for i, c := range codes {
			statuses[c]++
			if ids[i] != "" {
				distinct[ids[i]] = true
			}
		}
		// Count what the account actually holds with that title.
		stored := e.countNotesWithTitle(e.NotesKeyA, title)
		if len(distinct) != 1 || stored != 1 {
			dupRounds++
			s.Note("round %d: %d distinct ids answered, %d notes stored", round, len(distinct), stored)
		}
		for i := retries; i < retries+3; i++ {
			if codes[i] != http.StatusCreated {
				mismatch++
			}
		}
	}
	// The same key with another body is refused.
	key := Marker("idem-key")
	b1, _ := json.Marshal(map[string]string{"title": "first body", "content": e.NoteContent("a")})
	b2, _ := json.Marshal(map[string]string{"title": "second body", "content": e.NoteContent("b")})
	r1, err1 := e.Do(e.NotesRequest(http.MethodPost, "/v1/notes", e.NotesKeyA, b1, map[string]string{"Idempotency-Key": key}))
	r2, err2 := e.Do(e.NotesRequest(http.MethodPost, "/v1/notes", e.NotesKeyA, b2, map[string]string{"Idempotency-Key": key}))
	s.Sent += 2
	others := 0
	for c, n := range statuses {
		if c != 201 && c != 409 {
			others += n
		}
	}
	s.Failed = dupRounds + mismatch + others
	s.Outcomes = statusString(statuses)
	s.Check("no duplicate note", dupRounds == 0, "%d of %d rounds created more or fewer than one note", dupRounds, rounds)
	s.Check("concurrent duplicates get the replay (201) or 409 in flight", others == 0, "%s", statusString(statuses))
	s.Check("sequential retries replay 201 with the same id", mismatch == 0, "%d retries did not replay", mismatch)
	s.Check("same key, different body: 422", err1 == nil && err2 == nil && r1.Status == 201 && r2.Status == 422, "first %d, second %d", r1.Status, r2.Status)
}

// countNotesWithTitle lists the account's notes and counts title matches.
func (e *Env) countNotesWithTitle(key, title string) int {
	resp, err := e.Do(e.NotesRequest(http.MethodGet, "/v1/notes", key, nil, nil))
	if err != nil || resp.Status != 200 {
		return -1
	}
	var list []Note
	if json.Unmarshal(resp.Body, &list) != nil {
		return -1
	}
	n := 0
	for _, x := range list {
		if x.Title == title {
			n++
		}
	}
	return n
}

// ConcurrentQuota fires more concurrent requests than a key's monthly
// quota: exactly the quota succeeds.
func ConcurrentQuota(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Concurrent requests against a monthly quota (marketdata-svc)")
	const quota, n = 25, 60
	key, err := e.Market.CreateKey(ctx, "--account", "faults-quota", "--rate-per-second", "100000", "--monthly-quota", fmt.Sprint(quota))
	if err != nil {
		s.Check("setup", false, "%v", err)
		return
	}
	e.Secret(key, "marketdata quota key")
	codes := make([]int, n)
	errCodes := make([]string, n)
	together(n, func(i int) {
		resp, err := e.Do(e.MarketRequest(http.MethodGet, marketQueries[i%len(marketQueries)], key))
		if err != nil {
			return
		}
		codes[i] = resp.Status
		var m struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(resp.Body, &m) == nil {
			errCodes[i] = m.Error.Code
		}
	})
	statuses := map[int]int{}
	ok, usage := 0, 0
	for i, c := range codes {
		statuses[c]++
		if c == 200 {
			ok++
		}
		if c == 429 && errCodes[i] == "usage_limit_reached" {
			usage++
		}
	}
	after, _ := e.Do(e.MarketRequest(http.MethodGet, marketQueries[0], key))
	s.Sent = n + 1
	s.Outcomes = statusString(statuses)
	s.Failed = abs(ok-min(n, quota)) + (n - ok - usage)
	s.Check("exactly min(N, quota) succeed", ok == min(n, quota), "N=%d, quota=%d: %d succeeded", n, quota, ok)
	s.Check("the rest get 429 usage_limit_reached", usage == n-ok, "%d of %d refusals were usage_limit_reached", usage, n-ok)
	s.Check("the quota stays used up", after.Status == 429, "request %d: %d", n+1, after.Status)

	// The per-second rate limit: a burst of 3×rate at once admits about
	// one second's worth.
	const rate = 10
	rkey, err := e.Market.CreateKey(ctx, "--account", "faults-rate", "--rate-per-second", fmt.Sprint(rate))
	if err != nil {
		s.Check("rate key", false, "%v", err)
		return
	}
	e.Secret(rkey, "marketdata rate key")
	rcodes := make([]int, 3*rate)
	retryAfter := make([]string, 3*rate)
	start := time.Now()
	together(3*rate, func(i int) {
		resp, err := e.Do(e.MarketRequest(http.MethodGet, marketQueries[i%len(marketQueries)], rkey))
		if err == nil {
			rcodes[i] = resp.Status
			retryAfter[i] = resp.Header.Get("Retry-After")
		}
	})
	elapsed := time.Since(start)
	rok, r429, noRetry := 0, 0, 0
	for i, c := range rcodes {
		switch c {
		case 200:
			rok++
		case 429:
			r429++
			if retryAfter[i] == "" {
				noRetry++
			}
		}
	}
	s.Sent += 3 * rate
	allowed := rate + int(elapsed.Seconds()*rate) + 1
	s.Check("a burst is cut at the rate limit", rok >= rate && rok <= allowed && rok+r429 == 3*rate,
		"rate %d/s, %d at once over %s: %d ok, %d 429", rate, 3*rate, elapsed.Round(time.Millisecond), rok, r429)
	s.Check("429 carries Retry-After", noRetry == 0, "%d of %d without Retry-After", noRetry, r429)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func statusString(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := fmt.Sprint(k)
		if k == 0 {
			name = "no-response"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, m[k]))
	}
	return strings.Join(parts, " ")
}
