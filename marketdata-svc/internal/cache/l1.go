package cache

import (
	"container/list"
	"sync"
	"time"
)

// l1 is the in-process LRU of values that are immutable once stored
// (encoded EOD pages, ticker pages). Its keys begin with the data version,
// read from process memory: an import makes every older entry unreachable
// exactly as it does in Redis, and a hot page costs neither a network round
// trip nor the transfer of its bytes.
type l1 struct {
	mu       sync.Mutex
	maxItems int
	maxBytes int
	bytes    int
	ttl      time.Duration
	order    *list.List // front = most recently used
	items    map[string]*list.Element
	now      func() time.Time
}

type l1Entry struct {
	key     string
	value   any
	size    int
	expires time.Time
}

// L1MaxBytes bounds the in-process layer in front of Redis.
const L1MaxBytes = 16 << 20

func newL1(maxItems, maxBytes int, ttl time.Duration) *l1 {
	return &l1{maxItems: max(maxItems, 1), maxBytes: maxBytes, ttl: ttl, order: list.New(), items: map[string]*list.Element{}, now: time.Now}
}

// size is the estimated bytes of the entries held.
func (c *l1) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// get takes the key as bytes: a lookup by string(key) allocates nothing.
func (c *l1) get(key []byte) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[string(key)]
	if !ok {
		return nil, false
	}
	e := el.Value.(*l1Entry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

func (c *l1) put(key string, value any, size int) {
	c.putUntil(key, value, size, c.now().Add(c.ttl))
}

// putUntil stores value to be served until expires (no later than the TTL
// allows), for a value whose life is shorter than the TTL.
func (c *l1) putUntil(key string, value any, size int, expires time.Time) {
	if size > c.maxBytes/8 {
		return // one value may not evict most of the layer
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	if limit := c.now().Add(c.ttl); expires.After(limit) {
		expires = limit
	}
	c.items[key] = c.order.PushFront(&l1Entry{key: key, value: value, size: size, expires: expires})
	c.bytes += size
	for c.order.Len() > c.maxItems || c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *l1) remove(el *list.Element) {
	e := c.order.Remove(el).(*l1Entry)
	delete(c.items, e.key)
	c.bytes -= e.size
}
