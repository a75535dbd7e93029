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

// FailureThrottle counts invalid keys per client address in fixed windows,
// which makes guessing keys from one address slow without touching the
// store. Memory is bounded by maxClients.
//
// A lookup is reserved before it is made and counted when it ends
// (Reserve), so the lookups in flight count against the limit too: checking
// first and counting after let 200 concurrent bad keys from one address all
// reach the database against a limit of 20. Once an address is over its
// limit it gets one probe lookup per ProbeInterval and 429 otherwise, so a
// valid key that the service has not seen yet still gets through from an
// address that others behind the same NAT have flooded, while the flood
// costs at most limit + window/ProbeInterval lookups a window. Keys the
// service has verified recently do not need the throttle at all (see
// Authenticator).
type FailureThrottle struct {
	mu         sync.Mutex
	limit      int
	window     time.Duration
	maxClients int
	clients    map[string]failureWindow
	now        func() time.Time
}

type failureWindow struct {
	start     time.Time
	failures  int
	inFlight  int
	lastProbe time.Time
}

// ProbeInterval is how often an address over its limit may still have one
// key looked up.
const ProbeInterval = time.Second

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

// Fail records one failure of client that cost no lookup (a malformed key).
func (t *FailureThrottle) Fail(client string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.current(client, now)
	w.failures++
	t.clients[client] = w
}

// Reserve asks for one key lookup for client. Within the limit, counting
// the lookups in flight, it is granted; over it, one probe per
// ProbeInterval is granted and every other request gets a *ThrottledError.
// A granted lookup must be ended with release, saying whether the key
// proved invalid.
func (t *FailureThrottle) Reserve(client string) (release func(invalid bool), err error) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.current(client, now)
	if w.failures+w.inFlight >= t.limit {
		if now.Sub(w.lastProbe) < ProbeInterval {
			t.clients[client] = w
			return nil, &ThrottledError{RetryAfter: min(ProbeInterval, w.start.Add(t.window).Sub(now))}
		}
		w.lastProbe = now
	}
	w.inFlight++
	t.clients[client] = w
	start := w.start
	return func(invalid bool) {
		t.mu.Lock()
		defer t.mu.Unlock()
		w, ok := t.clients[client]
		if !ok || !w.start.Equal(start) {
			// The window rolled over (or was evicted) while the lookup
			// ran: it no longer counts there.
			return
		}
		w.inFlight--
		if invalid {
			w.failures++
		}
		t.clients[client] = w
	}, nil
}

// current returns client's window at now, a fresh one when the last has
// ended; the caller holds mu and stores it back.
func (t *FailureThrottle) current(client string, now time.Time) failureWindow {
	w, ok := t.clients[client]
	if ok && now.Before(w.start.Add(t.window)) {
		return w
	}
	if !ok && len(t.clients) >= t.maxClients {
		t.evict(now)
	}
	return failureWindow{start: now}
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
