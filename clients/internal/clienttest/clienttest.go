// Package clienttest is what the tests of both clients and of their
// transport share: a fake service on a local port that records the waits
// its client would sleep between retries, and the JSON answers it writes.
package clienttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is a fake service for one test. Its Sleep stands in for the
// client's wait between retries, so a test asserts the waits a Retry-After
// asked for without spending them.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	waits []time.Duration
}

// NewServer serves h until t ends.
func NewServer(t testing.TB, h http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{Server: httptest.NewServer(h)}
	t.Cleanup(s.Close)
	return s
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
