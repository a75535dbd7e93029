package auth

import (
	"errors"
	"sync"
	"time"
)

// ErrThrottled reports a client that presented too many invalid keys. The
// error is a *ThrottledError; test for it with errors.Is.
var ErrThrottled = errors.New("too many failed authentication attempts")

// ThrottledError carries how long the client must wait.
type ThrottledError struct {
	RetryAfter time.Duration
}

// Error describes the throttle.
func (e *ThrottledError) Error() string { return ErrThrottled.Error() }

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// FailureThrottle counts invalid keys per client address in fixed windows
// and blocks a client that reaches the limit until its window ends, which
// makes guessing keys from one address slow without touching the store.
// Memory is bounded by maxClients.
type FailureThrottle struct {
	mu         sync.Mutex
	limit      int
	window     time.Duration
	maxClients int
	clients    map[string]failureWindow
	now        func() time.Time
}

type failureWindow struct {
	start    time.Time
	failures int
}

// NewFailureThrottle allows limit failures per client in each window.
func NewFailureThrottle(limit int, window time.Duration, maxClients int, now func() time.Time) *FailureThrottle {
	if now == nil {
		now = time.Now
	}
	return &FailureThrottle{limit: limit, window: window, maxClients: maxClients, clients: make(map[string]failureWindow), now: now}
}

// Check returns a *ThrottledError when client is blocked.
func (t *FailureThrottle) Check(client string) error {
	now := t.now()
	t.mu.Lock()
	w, ok := t.clients[client]
	t.mu.Unlock()
	if !ok || w.failures < t.limit {
		return nil
	}
	if wait := w.start.Add(t.window).Sub(now); wait > 0 {
		return &ThrottledError{RetryAfter: wait}
	}
	return nil
}

// Fail records one failure of client.
func (t *FailureThrottle) Fail(client string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.clients[client]
	if !ok || !now.Before(w.start.Add(t.window)) {
		if !ok && len(t.clients) >= t.maxClients {
			t.evict(now)
		}
		w = failureWindow{start: now}
	}
	w.failures++
	t.clients[client] = w
}

// evict drops finished windows, then arbitrary ones, to stay within bounds.
func (t *FailureThrottle) evict(now time.Time) {
	for k, w := range t.clients {
		if !now.Before(w.start.Add(t.window)) {
			delete(t.clients, k)
		}
	}
	for k := range t.clients {
		if len(t.clients) < t.maxClients {
			return
		}
		delete(t.clients, k)
	}
}
