package cache

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// localBackend is a size-bounded LRU in process memory. Entries carry the
// data version they were built at; a lookup reads the database's current
// version first, so an import by any process makes them unreachable.
type localBackend struct {
	mu       sync.Mutex
	maxItems int
	maxBytes int
	bytes    int
	ttl      time.Duration
	order    *list.List // front = most recently used
	items    map[string]*list.Element
	version  func(ctx context.Context) (int64, error)
	now      func() time.Time
}

type localEntry struct {
	key     string // version:key
	value   []byte
	expires time.Time
}

// LocalMaxBytes bounds the in-process cache's memory whatever its entry
// count, so a few huge pages cannot blow the service's memory budget.
const LocalMaxBytes = 64 << 20

// NewLocal returns the in-process cache around inner, holding at most
// maxItems entries and LocalMaxBytes bytes. It logs that it is in use,
// since a fleet of instances each with its own cache shares no hits.
func NewLocal(inner marketdata.Store, maxItems int, o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = 5 * time.Minute
	}
	if maxItems < 1 {
		maxItems = 1
	}
	if o.Logger != nil {
		o.Logger.Info("no redis configured: using a bounded in-process EOD cache",
			slog.Int("max_entries", maxItems), slog.Int("max_bytes", LocalMaxBytes))
	}
	b := &localBackend{maxItems: maxItems, maxBytes: LocalMaxBytes, ttl: o.TTL, order: list.New(), items: map[string]*list.Element{}, version: inner.DataVersion, now: time.Now}
	return newStore(inner, b, "local", o)
}

func (b *localBackend) lookup(ctx context.Context, key string) (int64, []byte, bool, error) {
	v, err := b.version(ctx)
	if err != nil {
		return -1, nil, false, fmt.Errorf("cache lookup: data version: %w", err)
	}
	full := fmt.Sprintf("%d:%s", v, key)
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.items[full]
	if !ok {
		return v, nil, false, nil
	}
	e := el.Value.(*localEntry)
	if !b.now().Before(e.expires) {
		b.remove(el)
		return v, nil, false, nil
	}
	b.order.MoveToFront(el)
	return v, e.value, true, nil
}

func (b *localBackend) store(_ context.Context, version int64, key string, entry []byte) error {
	if len(entry) > b.maxBytes/4 {
		return nil // one page may not evict most of the cache
	}
	full := fmt.Sprintf("%d:%s", version, key)
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.items[full]; ok {
		b.remove(el)
	}
	b.items[full] = b.order.PushFront(&localEntry{key: full, value: entry, expires: b.now().Add(b.ttl)})
	b.bytes += len(entry)
	for b.order.Len() > b.maxItems || b.bytes > b.maxBytes {
		b.remove(b.order.Back())
	}
	return nil
}

func (b *localBackend) remove(el *list.Element) {
	e := b.order.Remove(el).(*localEntry)
	delete(b.items, e.key)
	b.bytes -= len(e.value)
}

func (b *localBackend) status(context.Context) string { return "in-process" }

func (b *localBackend) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.order.Len()
}
