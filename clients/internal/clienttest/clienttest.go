// Package clienttest is what the tests of both clients and of their
// transport share: a fake service on a local port that records the
// requests it got and the waits its client would sleep between retries,
// the JSON answers it writes, and the draining of a client's iterator.
package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is a fake service for one test. It records every request before
// h answers it, so tests assert what the client sent without locking of
// their own. Its Sleep stands in for the client's wait between retries,
// so a test asserts the waits a Retry-After asked for without spending
// them.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	waits    []time.Duration
}

// Request is one request the Server got.
type Request struct {
	Method string
	// Path and Query are the URL's path and raw query.
	Path, Query string
	Header      http.Header
	Body        string
}

// NewServer serves h until t ends.
func NewServer(t testing.TB, h http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)})
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests are the requests the server got, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Param is the value of the query parameter name in each request, in
// order; "" where a request had none.
func (s *Server) Param(name string) []string {
	var values []string
	for _, r := range s.Requests() {
		q, _ := url.ParseQuery(r.Query)
		values = append(values, q.Get(name))
	}
	return values
}

// Sleep records d and returns at once.
func (s *Server) Sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

// Waits are the waits Sleep recorded, in order.
func (s *Server) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

// WriteJSON answers status with v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Collect yields every item of seq, failing t at the first error.
func Collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	return Take(t, seq, -1)
}

// Take yields the first n items of seq and breaks the loop, or every item
// when n < 1, failing t at the first error.
func Take[T any](t testing.TB, seq iter.Seq2[T, error], n int) []T {
	t.Helper()
	var items []T
	for item, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		if items = append(items, item); len(items) == n {
			break
		}
	}
	return items
}
