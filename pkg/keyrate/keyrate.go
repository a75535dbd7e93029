// Package keyrate is the per-key request rate limit both services apply
// alike: the GCRA kept in process memory, and the headers that report a
// key's limits on every answer.
//
// The rate allows rate requests per second with a burst of the same size
// (one second's worth): a client that paces itself never sees a refusal,
// and one that bursts gets at most a second's worth at once. A refused
// request costs the key nothing.
//
// Table is the GCRA state of many keys, for a caller that keeps more under
// the same lock (marketdata-svc's in-process limiter adds a monthly
// counter); Limiter is a Table behind its own lock with one rate for every
// key. Both hold one process's view: replicas do not share it.
package keyrate

import (
	"sync"
	"time"
)

// Result is the outcome of one request against a key's rate.
type Result struct {
	// Allowed reports that the request may proceed.
	Allowed bool
	// Remaining is how many more requests the key could make at once now.
	Remaining int
	// ResetAfter is when the key is back to a full burst.
	ResetAfter time.Duration
	// RetryAfter is when a refused request may be retried.
	RetryAfter time.Duration
}

// pruneAt is the number of keys at which Prune drops the idle ones: below
// it the table is small enough to keep whole.
const pruneAt = 10_000

// Table holds the GCRA theoretical arrival time (TAT) of each key. It is
// not safe for concurrent use: its owner locks it. The zero value is
// ready to use.
type Table struct {
	tat map[string]time.Time
}

// Allow checks one request of key at now against rate requests per
// second (rate > 0), and counts it when it is allowed.
func (t *Table) Allow(now time.Time, key string, rate int) Result {
	r := t.Peek(now, key, rate)
	if !r.Allowed {
		return r
	}
	// Counting the request moves the key's TAT one emission interval on:
	// one request fewer remains, and the burst is full again that much
	// later. Peek allowed it, so at least this one remained.
	r.Remaining--
	r.ResetAfter += time.Second / time.Duration(rate)
	if t.tat == nil {
		t.tat = map[string]time.Time{}
	}
	t.tat[key] = now.Add(r.ResetAfter)
	return r
}

// Peek reports what Allow would answer for one request of key at now,
// counting nothing; an allowed answer's Remaining is the requests the key
// could make at once, this one included. An owner that may refuse the
// request for another limit asks Peek first, so that the refusal costs
// the key no rate token.
func (t *Table) Peek(now time.Time, key string, rate int) Result {
	emission := time.Second / time.Duration(rate)
	burst := emission * time.Duration(rate)
	tat := t.tat[key]
	if tat.Before(now) {
		tat = now
	}
	if allowAt := tat.Add(emission).Add(-burst); now.Before(allowAt) {
		return Result{RetryAfter: allowAt.Sub(now), ResetAfter: tat.Sub(now)}
	}
	return Result{Allowed: true, Remaining: int((burst - tat.Sub(now)) / emission), ResetAfter: tat.Sub(now)}
}

// Prune drops the keys whose burst is full again at now, once the table
// holds pruneAt keys or more, so that it keeps only the keys active in
// the last second or so. It reports whether it pruned, for an owner that
// prunes state of its own alongside.
func (t *Table) Prune(now time.Time) bool {
	if len(t.tat) < pruneAt {
		return false
	}
	for k, tat := range t.tat {
		if tat.Before(now) {
			delete(t.tat, k)
		}
	}
	return true
}

// Limiter applies one rate to every key, in process memory.
type Limiter struct {
	rate int
	now  func() time.Time
	mu   sync.Mutex
	t    Table
}

// NewLimiter allows rate requests per second per key (at least 1); now
// may be nil for the clock.
func NewLimiter(rate int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{rate: max(rate, 1), now: now}
}

// Rate is the requests per second each key may make.
func (l *Limiter) Rate() int { return l.rate }

// Allow checks one request of key, and counts it when it is allowed.
func (l *Limiter) Allow(key string) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.t.Prune(now)
	return l.t.Allow(now, key, l.rate)
}
