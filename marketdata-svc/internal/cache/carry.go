package cache

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Changes tells what data versions changed in the EOD bars served (the
// primary database, marketdatadb.Store.EODChanges): the changes of the
// versions after from up to to, merged, or nil when they are unknown (a
// version recorded none, the database has not reached to, or they name
// more than limit symbols).
type Changes interface {
	EODChanges(ctx context.Context, from, to int64, limit int) (marketdata.EODChanges, error)
}

// Bounds of the changes a Store holds to carry pages forward. A day of a
// whole universe (170,000 symbols) fits; a backfill of more, or a process
// that missed many versions, carries nothing and reads its pages again.
const (
	carryMaxSymbols  = 250_000
	carryMaxVersions = 32
	// carryLoadTimeout bounds the read of the changes: until it ends,
	// misses are read from the store as before.
	carryLoadTimeout = 10 * time.Second
)

// carrier keeps what changed between the version the process served
// before the current one (prev) and the current one (cur), so that an
// EOD page built at prev that no change reaches is served, and stored, at
// cur instead of being read again. The changes are read once per version
// change, in the background: until they are, and when they cannot be
// (unknown, too many, a failed read), pages are read from the store as
// without them.
type carrier struct {
	changes Changes
	// ttl is how long a page lives: after cur has been in force that long,
	// no page of prev is left to carry.
	ttl time.Duration
	log *slog.Logger

	mu        sync.Mutex
	cur, prev int64 // -1: none yet
	since     time.Time
	set       marketdata.EODChanges // changes over (prev, cur]; nil until read, or unknown
}

func newCarrier(changes Changes, ttl time.Duration, log *slog.Logger) *carrier {
	if changes == nil {
		return nil
	}
	return &carrier{changes: changes, ttl: ttl, log: log, cur: -1, prev: -1}
}

// at notes that version v is in force and returns the version served
// before it with the changes since, when they are read and pages of prev
// may still live; changes is nil otherwise. A version above the current
// one starts the read of the changes since the current one.
func (c *carrier) at(v int64, now time.Time) (prev int64, changes marketdata.EODChanges) {
	if c == nil {
		return -1, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v > c.cur {
		c.prev, c.cur, c.since, c.set = c.cur, v, now, nil
		if c.prev >= 0 && v-c.prev <= carryMaxVersions {
			go c.load(c.prev, v)
		}
		return -1, nil
	}
	// A caller that read the version before it moved on carries nothing.
	if v < c.cur || c.set == nil || !now.Before(c.since.Add(c.ttl)) {
		return -1, nil
	}
	return c.prev, c.set
}

// load reads the changes over (from, to] and keeps them if to is still
// the current version.
func (c *carrier) load(from, to int64) {
	ctx, cancel := context.WithTimeout(context.Background(), carryLoadTimeout)
	defer cancel()
	set, err := c.changes.EODChanges(ctx, from, to, carryMaxSymbols)
	if err != nil {
		if c.log != nil {
			c.log.Warn("cache: changes of the data versions unread, pages of the previous version are read again", "from", from, "to", to, "err", err)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == to && c.prev == from {
		c.set = set
	}
}

// carried is a page carried forward by a shared carry (carryForward).
type carried[P any] struct {
	p  P
	ok bool
}

// carryForward serves k's page at version v, whose in-process key is key,
// from its page at prev, the version served before, when that page is
// still in one of the layers and no change since (changes, from
// carrier.at) reaches it (k.unchangedBy): the page is stored at v in both
// layers, as fill stores a page read. Any doubt (changes unknown or not
// read yet, a page not found, Redis failing) is a miss. Concurrent
// callers of one key share one attempt.
func carryForward[P any, K pageKind[P]](ctx context.Context, s *Store, k K, v int64, key string, prev int64, changes marketdata.EODChanges) (P, bool) {
	var zero P
	if changes == nil || !k.unchangedBy(changes) {
		return zero, false
	}
	prefix := string(appendVersion(nil, v))
	if !strings.HasPrefix(key, prefix) {
		return zero, false
	}
	prevKey := appendVersion(nil, prev)
	prevKey = append(prevKey, key[len(prefix):]...)
	res, err := s.shared(ctx, "carry|"+key, func(ctx context.Context) (any, error) {
		var p P
		val, ok := s.memory.get(prevKey)
		if ok {
			p = val.(P)
		} else if s.redis != nil && s.now().UnixNano() >= s.bypassUntil.Load() {
			p, _, ok = fromRedis[P](ctx, s, k, prev)
		}
		if ok {
			keep(ctx, s, k, v, key, p, s.now())
		}
		return carried[P]{p: p, ok: ok}, nil
	})
	if err != nil {
		return zero, false
	}
	c := res.(carried[P])
	return c.p, c.ok
}
