package auth

import (
	"context"
	"maps"
	"sync"
	"time"
)

// LastUsedFlusher persists the last-use times of keys, by key id.
type LastUsedFlusher func(ctx context.Context, lastUsed LastUsed) error

// LastUsed is a batch of last-use times by key id.
type LastUsed map[string]time.Time

// Columns returns the batch as two parallel columns, ids and times in UTC,
// the form a store writes in one statement (UPDATE ... FROM unnest($1,
// $2)). An id keep refuses, one the store's id column could never hold,
// is left out: one such id would otherwise fail every batch it is in.
func (u LastUsed) Columns(keep func(id string) bool) (ids []string, times []time.Time) {
	ids = make([]string, 0, len(u))
	times = make([]time.Time, 0, len(u))
	for id, at := range u {
		if keep != nil && !keep(id) {
			continue
		}
		ids = append(ids, id)
		times = append(times, at.UTC())
	}
	return ids, times
}

// LastUsedTracker records when keys were last used in memory and writes
// them in batches, so a request never waits for a database write.
type LastUsedTracker struct {
	flush LastUsedFlusher
	mu    sync.Mutex
	seen  map[string]time.Time
}

// NewLastUsedTracker returns a tracker that persists through flush.
func NewLastUsedTracker(flush LastUsedFlusher) *LastUsedTracker {
	return &LastUsedTracker{flush: flush, seen: make(map[string]time.Time)}
}

// Record notes that p's key was used at t. Its signature fits
// Options.OnVerified.
func (t *LastUsedTracker) Record(p Principal, at time.Time) {
	t.mu.Lock()
	if at.After(t.seen[p.KeyID]) {
		t.seen[p.KeyID] = at
	}
	t.mu.Unlock()
}

// Flush writes what was recorded since the last flush. On failure the
// batch is merged back so the next flush retries it.
func (t *LastUsedTracker) Flush(ctx context.Context) error {
	t.mu.Lock()
	batch := t.seen
	t.seen = make(map[string]time.Time)
	t.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := t.flush(ctx, batch); err != nil {
		t.mu.Lock()
		for id, at := range batch {
			if at.After(t.seen[id]) {
				t.seen[id] = at
			}
		}
		t.mu.Unlock()
		return err
	}
	return nil
}

// Run flushes every interval until ctx ends, then flushes once more with a
// short deadline so that a graceful shutdown loses nothing. Errors go to
// onErr, which may be nil.
func (t *LastUsedTracker) Run(ctx context.Context, interval time.Duration, onErr func(error)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			if err := t.Flush(ctx); err != nil && onErr != nil {
				onErr(err)
			}
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if err := t.Flush(final); err != nil && onErr != nil {
				onErr(err)
			}
			cancel()
			return
		}
	}
}

// pending returns a copy of what has not been flushed yet.
func (t *LastUsedTracker) pending() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.seen)
}
