package auth

import (
	"crypto/subtle"
	"sync"
	"time"
)

// keyCache is a small bounded cache of verified keys. Entries live for at
// most ttl, so a revocation takes effect within ttl. When full, expired
// entries are dropped first and then an arbitrary one: the cache only saves
// store lookups, so an eviction costs one lookup, never correctness.
type keyCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	entries map[Hash]cacheEntry
	// gen counts the keys forgotten: a lookup that read the store before a
	// revocation must not cache its answer after the revocation dropped
	// the key (putAt).
	gen uint64
}

type cacheEntry struct {
	hash      Hash
	principal Principal
	expires   time.Time
}

func newKeyCache(ttl time.Duration, max int) *keyCache {
	return &keyCache{ttl: ttl, max: max, entries: make(map[Hash]cacheEntry, max)}
}

func (c *keyCache) get(h Hash, now time.Time) (Principal, bool) {
	if c.max <= 0 || c.ttl <= 0 {
		return Principal{}, false
	}
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	// The map is keyed by a digest, which reveals nothing useful through
	// timing; the explicit compare keeps every in-memory check constant-time.
	if !ok || subtle.ConstantTimeCompare(e.hash[:], h[:]) != 1 || !now.Before(e.expires) {
		return Principal{}, false
	}
	return e.principal, true
}

// getStale is get for an entry that expired less than grace ago.
func (c *keyCache) getStale(h Hash, now time.Time, grace time.Duration) (Principal, bool) {
	if c.max <= 0 || c.ttl <= 0 {
		return Principal{}, false
	}
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare(e.hash[:], h[:]) != 1 || !now.Before(e.expires.Add(grace)) {
		return Principal{}, false
	}
	return e.principal, true
}

func (c *keyCache) put(h Hash, p Principal, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(h, p, now)
}

// generation is the count of forgets so far, for putAt.
func (c *keyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// putAt is put for an answer read at generation gen: it is dropped when a
// key has been forgotten since, since the answer may predate a
// revocation. Any forget drops it, not only its own key's: the cache
// does not know which key a hash is until the store answers, and the
// cost is one more lookup.
func (c *keyCache) putAt(h Hash, p Principal, now time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	c.putLocked(h, p, now)
}

func (c *keyCache) putLocked(h Hash, p Principal, now time.Time) {
	if c.max <= 0 || c.ttl <= 0 {
		return
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[h] = cacheEntry{hash: h, principal: p, expires: now.Add(c.ttl)}
}

func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// dropKey removes the entries of key id: a scan, as the cache is keyed by
// hash, which is fine for a revocation now and then over at most max
// entries.
func (c *keyCache) dropKey(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	n := 0
	for h, e := range c.entries {
		if e.principal.KeyID == id {
			delete(c.entries, h)
			n++
		}
	}
	return n
}
