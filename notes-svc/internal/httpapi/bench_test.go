package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkGetNote is the service's own CPU for GET /v1/notes/{id} on the
// in-memory store: the edge middleware, authentication with a cached key,
// the handler and the encoding, as one request of the bench's notes_get.
func BenchmarkGetNote(b *testing.B) {
	h := newHarness(b)
	resp, body := h.do(http.MethodPost, "/v1/notes", h.alice, `{"title":"t","content":"`+strings.Repeat("word ", 120)+`","tags":["a","b"]}`, nil)
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	path := resp.Header.Get("Location")
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+h.alice)
	b.ReportAllocs()
	for b.Loop() {
		h.logs.Reset()
		w := httptest.NewRecorder()
		h.srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("get: %d", w.Code)
		}
	}
}

// BenchmarkCreateNote is the same for POST /v1/notes with the bench's
// body size (about 600 bytes of content, two tags).
func BenchmarkCreateNote(b *testing.B) {
	h := newHarness(b)
	body := `{"title":"bench-post note","content":"` + strings.Repeat("Quarterly revenue grew while margins held; the team will review the forecast next week. ", 7) + `","tags":["bench","load"]}`
	b.ReportAllocs()
	for b.Loop() {
		h.logs.Reset()
		req := httptest.NewRequest(http.MethodPost, "/v1/notes", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+h.alice)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.srv.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", w.Code, w.Body)
		}
	}
}
