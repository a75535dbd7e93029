package notesclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/internal/clienttest"
)

// noteJSON is a note as notes-svc encodes it.
func noteJSON(i int) map[string]any {
	return map[string]any{
		"id": fmt.Sprintf("note_%026d", i), "title": fmt.Sprintf("n%d", i), "content": "c",
		"tags": []string{}, "created_at": "2026-01-02T03:04:05Z", "updated_at": "2026-01-02T03:04:06Z",
	}
}

func writeProblem(w http.ResponseWriter, status int, code, detail string, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": problemTypeBase + code, "title": http.StatusText(status), "status": status, "detail": detail, "request_id": "rid-1",
	})
}

func newTestClient(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *clienttest.Server) {
	t.Helper()
	srv := clienttest.NewServer(t, h)
	test := []Option{WithAPIKey("tdn_test"), WithHTTPClient(srv.Client()), func(o *options) { o.Sleep = srv.Sleep }}
	c, err := New(srv.URL, append(test, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// pagedServer serves total notes with limit and offset like notes-svc.
func pagedServer(total int, withCount bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/notes" || r.Header.Get("Authorization") != "Bearer tdn_test" {
			writeProblem(w, http.StatusUnauthorized, "unauthorized", "wrong path or key")
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		page := []map[string]any{}
		for i := offset; i < min(offset+limit, total); i++ {
			page = append(page, noteJSON(i))
		}
		if withCount {
			w.Header().Set("X-Total-Count", strconv.Itoa(total))
		}
		clienttest.WriteJSON(w, http.StatusOK, page)
	}
}

func TestListPagesThroughEveryNote(t *testing.T) {
	for _, tc := range []struct {
		name      string
		total     int
		withCount bool
		want      []string // the offsets requested
	}{
		{"short last page", 7, true, []string{"0", "3", "6"}},
		{"full last page with X-Total-Count", 6, true, []string{"0", "3"}},
		{"full last page without X-Total-Count", 6, false, []string{"0", "3", "6"}},
		{"no notes", 0, true, []string{"0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := newTestClient(t, pagedServer(tc.total, tc.withCount))
			notes := clienttest.Collect(t, c.List(context.Background(), ListParams{Tag: "research", Q: "goog", PageSize: 3}))
			if len(notes) != tc.total {
				t.Fatalf("got %d notes, want %d", len(notes), tc.total)
			}
			for i, n := range notes {
				if n.ID != fmt.Sprintf("note_%026d", i) || n.CreatedAt != time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) || n.Tags == nil {
					t.Fatalf("note %d is %+v", i, n)
				}
			}
			for _, r := range srv.Requests() {
				if !strings.Contains(r.Query, "limit=3") || !strings.Contains(r.Query, "tag=research") || !strings.Contains(r.Query, "q=goog") {
					t.Fatalf("query %q lacks the page size or filters", r.Query)
				}
			}
			if offsets := srv.Param("offset"); !slices.Equal(offsets, tc.want) {
				t.Fatalf("offsets requested %v, want %v", offsets, tc.want)
			}
		})
	}
}

func TestListStopsWhenTheLoopBreaks(t *testing.T) {
	c, srv := newTestClient(t, pagedServer(100, true))
	clienttest.Take(t, c.List(context.Background(), ListParams{PageSize: 3}), 4)
	if got := len(srv.Requests()); got != 2 {
		t.Fatalf("%d requests for 4 notes of pages of 3, want 2", got)
	}
}

func TestListYieldsTheErrorOfALaterPage(t *testing.T) {
	paged := pagedServer(10, true)
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("offset") == "5" {
			writeProblem(w, http.StatusInternalServerError, "internal", "")
			return
		}
		paged(w, r)
	})
	var got int
	var last error
	for _, err := range c.List(context.Background(), ListParams{PageSize: 5}) {
		if err != nil {
			last = err
			continue
		}
		got++
	}
	var e *Error
	if got != 5 || !errors.As(last, &e) || e.Status != 500 || e.Code != "internal" {
		t.Fatalf("got %d notes and error %v, want 5 and a 500 internal *Error", got, last)
	}
}

func TestRetryGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []Option
		retryAfter string
		wantCalls  int
	}{
		{"after WithRetries attempts", []Option{WithRetries(1)}, "1", 2},
		{"with retries off", []Option{WithRetries(0)}, "1", 1},
		{"when Retry-After is longer than the maximum wait", []Option{WithMaxRetryWait(time.Minute)}, "61", 1},
		{"when Retry-After is malformed", nil, "soon", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				calls++
				writeProblem(w, http.StatusServiceUnavailable, "unavailable", "database down", "Retry-After", tc.retryAfter)
			}, tc.opts...)
			_, err := c.Get(context.Background(), "note_1")
			var e *Error
			if !errors.As(err, &e) || e.Status != 503 || e.Code != "unavailable" {
				t.Fatalf("err = %v, want a 503 *Error", err)
			}
			if calls != tc.wantCalls || len(srv.Waits()) != tc.wantCalls-1 {
				t.Fatalf("%d calls and %d waits, want %d calls", calls, len(srv.Waits()), tc.wantCalls)
			}
		})
	}
}

func TestCreateSendsOneIdempotencyKeyPerCreate(t *testing.T) {
	var srv *clienttest.Server
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || !strings.Contains(string(body), `"title":"t"`) {
			writeProblem(w, http.StatusBadRequest, "malformed-request", "unexpected "+r.Method+" "+string(body))
			return
		}
		// Every Create's first attempt is refused once, so each is retried.
		calls := len(srv.Requests())
		if calls%2 == 1 {
			writeProblem(w, http.StatusServiceUnavailable, "timeout", "", "Retry-After", "1")
			return
		}
		clienttest.WriteJSON(w, http.StatusCreated, noteJSON(calls))
	})
	for range 2 {
		if _, err := c.Create(context.Background(), NewNote{Title: "t", Content: "c", Tags: []string{"x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []time.Duration{time.Second, time.Second}; !slices.Equal(srv.Waits(), want) {
		t.Fatalf("waited %v, want %v (each refusal's Retry-After)", srv.Waits(), want)
	}
	var keys []string
	for _, r := range srv.Requests() {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
	}
	if len(keys) != 4 || keys[0] == "" || keys[2] == "" {
		t.Fatalf("keys %q, want 4 requests each with a key", keys)
	}
	if keys[0] != keys[1] || keys[2] != keys[3] {
		t.Fatalf("keys %q: a retry sent another key than its first attempt", keys)
	}
	if keys[0] == keys[2] {
		t.Fatalf("keys %q: two Creates sent the same key", keys)
	}
}

func TestErrorsCarryTheProblem(t *testing.T) {
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeProblem(w, http.StatusNotFound, "not-found", "no note note_x")
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Set("X-Request-ID", "rid-2")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"type":"`+problemTypeBase+`validation-failed","title":"Validation failed","status":422,`+
				`"request_id":"rid-2","errors":[{"field":"title","detail":"must not be empty"}]}`)
		}
	})
	_, err := c.Get(context.Background(), "note_x")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T %v is not an *Error", err, err)
	}
	if e.Status != 404 || e.Code != "not-found" || e.Type != problemTypeBase+"not-found" || e.Detail != "no note note_x" || e.RequestID != "rid-1" {
		t.Fatalf("error %+v", e)
	}
	if got := err.Error(); got != "notes: 404 not-found: no note note_x" {
		t.Fatalf("Error() = %q", got)
	}

	_, err = c.Create(context.Background(), NewNote{Title: ""})
	if !errors.As(err, &e) || e.Status != 422 || e.Code != "validation-failed" || len(e.Errors) != 1 ||
		e.Errors[0] != (FieldError{Field: "title", Detail: "must not be empty"}) {
		t.Fatalf("error %+v", e)
	}
	if !strings.Contains(err.Error(), "title: must not be empty") {
		t.Fatalf("Error() = %q does not name the field", err)
	}
}

func TestErrorFromAnAnswerThatIsNotAProblem(t *testing.T) {
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Request-ID", "rid-3")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>bad gateway</html>")
	})
	_, err := c.Get(context.Background(), "note_1")
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || e.Title != "Bad Gateway" || e.Code != "" || e.RequestID != "rid-3" {
		t.Fatalf("err = %#v", err)
	}
}
