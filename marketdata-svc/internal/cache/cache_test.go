package cache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// countingStore is the store below the cache: it counts EOD calls and
// answers a page that names the data version it was built at.
type countingStore struct {
	marketdata.Store
	calls       atomic.Int64
	tickerCalls atomic.Int64
	version     atomic.Int64
	gate        chan struct{} // when set, EOD waits for it
}

func (s *countingStore) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	s.calls.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	if q.Symbols[0] == "NONE" {
		return marketdata.EODPage{}, marketdata.ErrNoValidSymbols
	}
	v := s.version.Load()
	return marketdata.EODPage{Total: 10 + v, Bars: []marketdata.Bar{{Symbol: q.Symbols[0], Close: float64(v), Date: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC)}}}, nil
}

func (s *countingStore) Tickers(_ context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	s.tickerCalls.Add(1)
	return marketdata.TickerPage{Total: 1, Tickers: []marketdata.Ticker{{Symbol: q.Symbols[0], Name: "v" + strconv.FormatInt(s.version.Load(), 10)}}}, nil
}

func (s *countingStore) DataVersion(context.Context) (int64, error) { return s.version.Load(), nil }

func query(sym string) marketdata.EODQuery {
	return marketdata.EODQuery{Symbols: []string{sym}, Sort: marketdata.SortDesc, Limit: 100}
}

func mustEOD(t *testing.T, c *Store, q marketdata.EODQuery) marketdata.EODPage {
	t.Helper()
	p, err := c.EOD(context.Background(), q)
	if err != nil {
		t.Fatalf("EOD: %v", err)
	}
	return p
}

func newRedisCache(t *testing.T, url string, inner marketdata.Store, timeout time.Duration) *Store {
	t.Helper()
	rdb, err := NewRedisClient(url, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return NewRedis(inner, rdb, Options{TTL: time.Minute, Timeout: timeout, Registry: prometheus.NewRegistry()})
}

func TestRedisCacheVersioning(t *testing.T) {
	url := testenv.Redis(t)
	inner := &countingStore{}
	inner.version.Store(7)
	c := newRedisCache(t, url, inner, time.Second)
	rdb, err := NewRedisClient(url, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()

	p := mustEOD(t, c, query("GOOG"))
	if p.Total != 17 || p.Bars[0].Symbol != "GOOG" || inner.calls.Load() != 1 {
		t.Fatalf("first: %+v, %d calls", p, inner.calls.Load())
	}
	if v, _ := rdb.Get(context.Background(), VersionKey).Result(); v != "7" {
		t.Errorf("version not published from the database: %q", v)
	}
	p = mustEOD(t, c, query("GOOG"))
	if p.Total != 17 || inner.calls.Load() != 1 {
		t.Fatalf("second should hit: %+v, %d calls", p, inner.calls.Load())
	}
	if testutil.ToFloat64(c.metrics.hits) != 1 || testutil.ToFloat64(c.metrics.misses) != 1 {
		t.Errorf("hits %v misses %v", testutil.ToFloat64(c.metrics.hits), testutil.ToFloat64(c.metrics.misses))
	}

	// An import commits version 8 and raises the Redis version: the old
	// entry is unreachable at once, although its TTL has not run out.
	inner.version.Store(8)
	if err := raiseScript.Run(context.Background(), rdb, []string{VersionKey}, 8).Err(); err != nil {
		t.Fatal(err)
	}
	p = mustEOD(t, c, query("GOOG"))
	if p.Total != 18 || p.Bars[0].Close != 8 || inner.calls.Load() != 2 {
		t.Fatalf("after the bump: %+v, %d calls", p, inner.calls.Load())
	}
	// A lower version never wins over a higher one.
	if v, _ := raiseScript.Run(context.Background(), rdb, []string{VersionKey}, 3).Text(); v != "8" {
		t.Errorf("raise to a lower version gave %q", v)
	}
	// Errors are not cached and pass through.
	if _, err := c.EOD(context.Background(), query("NONE")); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Errorf("error lost: %v", err)
	}
}

func TestConcurrentMissesCollapse(t *testing.T) {
	inner := &countingStore{gate: make(chan struct{})}
	c := newRedisCache(t, testenv.Redis(t), inner, time.Second)
	const n = 8
	var wg sync.WaitGroup
	results := make([]marketdata.EODPage, n)
	for i := range n {
		wg.Go(func() {
			p, err := c.EOD(context.Background(), query("MSFT"))
			if err != nil {
				t.Error(err)
			}
			results[i] = p
		})
	}
	// Release the one store query once every caller has missed.
	for testutil.ToFloat64(c.metrics.misses) < n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(inner.gate)
	wg.Wait()
	if got := inner.calls.Load(); got != 1 {
		t.Errorf("%d concurrent misses made %d store queries, want 1", n, got)
	}
	for _, p := range results {
		if len(p.Bars) != 1 || p.Bars[0].Symbol != "MSFT" {
			t.Errorf("result %+v", p)
		}
	}
}

func TestRedisOutageFallsBackAndResumes(t *testing.T) {
	proxy := testenv.RedisProxy(t)
	inner := &countingStore{}
	c := newRedisCache(t, proxy.URL, inner, 50*time.Millisecond)
	clock := time.Now()
	var mu sync.Mutex
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }

	mustEOD(t, c, query("GOOG"))
	mustEOD(t, c, query("GOOG"))
	if testutil.ToFloat64(c.metrics.hits) != 1 {
		t.Fatal("cache not working before the outage")
	}

	proxy.Stop()
	for i := range 5 {
		if p := mustEOD(t, c, query("GOOG")); len(p.Bars) != 1 {
			t.Fatalf("request %d during the outage: %+v", i, p)
		}
	}
	if testutil.ToFloat64(c.metrics.errors.WithLabelValues("lookup")) < 1 || testutil.ToFloat64(c.metrics.fallbacks) != 5 {
		t.Errorf("outage not counted: errors %v fallbacks %v", testutil.ToFloat64(c.metrics.errors.WithLabelValues("lookup")), testutil.ToFloat64(c.metrics.fallbacks))
	}
	if c.Status(context.Background()) != "unavailable" {
		t.Error("status during the outage")
	}

	// A slow Redis is an outage too: the request does not wait for it.
	proxy.Start()
	proxy.SetLatency(300 * time.Millisecond)
	advance(2 * time.Second)
	if p := mustEOD(t, c, query("GOOG")); len(p.Bars) != 1 {
		t.Fatalf("slow redis: %+v", p)
	}
	proxy.SetLatency(0)

	// Back to normal: after the bypass second the cache serves hits again.
	advance(2 * time.Second)
	hits := testutil.ToFloat64(c.metrics.hits)
	calls := inner.calls.Load()
	var resumed bool
	for range 50 {
		mustEOD(t, c, query("GOOG"))
		if testutil.ToFloat64(c.metrics.hits) > hits {
			resumed = true
			break
		}
		advance(2 * time.Second) // a failure right after restart bypasses for a second
	}
	if !resumed {
		t.Fatalf("cache did not resume: %d store calls since", inner.calls.Load()-calls)
	}
}

func TestLocalCache(t *testing.T) {
	inner := &countingStore{}
	c := NewLocal(inner, 2, Options{TTL: time.Minute, Registry: prometheus.NewRegistry()})
	mustEOD(t, c, query("A"))
	mustEOD(t, c, query("A"))
	if inner.calls.Load() != 1 {
		t.Fatalf("local cache missed: %d calls", inner.calls.Load())
	}
	// Another process imports: the database's version moves on.
	inner.version.Store(1)
	if p := mustEOD(t, c, query("A")); p.Bars[0].Close != 1 || inner.calls.Load() != 2 {
		t.Fatalf("stale after import: %+v", p)
	}
	mustEOD(t, c, query("B"))
	mustEOD(t, c, query("C"))
	if n := c.backend.(*localBackend).len(); n != 2 {
		t.Errorf("LRU holds %d entries, bound 2", n)
	}
	mustEOD(t, c, query("C"))
	if inner.calls.Load() != 4 {
		t.Errorf("most recent entry evicted: %d calls", inner.calls.Load())
	}
	if c.Status(context.Background()) != "in-process" {
		t.Error("status")
	}
}

// TestKnownVersionLayer covers requests whose data version came with their
// rate limits: a hot page is served from process memory, an import (a
// greater version) is seen at once, and ticker pages are kept likewise.
func TestKnownVersionLayer(t *testing.T) {
	url := testenv.Redis(t)
	inner := &countingStore{}
	inner.version.Store(3)
	c := newRedisCache(t, url, inner, time.Second)
	at := func(v int64) context.Context { return marketdata.WithDataVersion(context.Background(), v) }

	for i := range 3 {
		p, err := c.EOD(at(3), query("MSFT"))
		if err != nil || p.Total != 13 || inner.calls.Load() != 1 {
			t.Fatalf("request %d at v3: %+v %v, %d calls", i, p, err, inner.calls.Load())
		}
	}
	// Another instance, with an empty process layer, finds the entry in
	// Redis.
	other := newRedisCache(t, url, inner, time.Second)
	if p, err := other.EOD(at(3), query("MSFT")); err != nil || p.Total != 13 || inner.calls.Load() != 1 {
		t.Fatalf("other instance: %+v %v, %d calls", p, err, inner.calls.Load())
	}
	// An import: the next request carries version 4 and gets fresh data.
	inner.version.Store(4)
	if p, err := c.EOD(at(4), query("MSFT")); err != nil || p.Total != 14 || inner.calls.Load() != 2 {
		t.Fatalf("after import: %+v %v, %d calls", p, err, inner.calls.Load())
	}

	tq := marketdata.TickerQuery{Symbols: []string{"MSFT"}, Limit: 10}
	for range 2 {
		if p, err := c.Tickers(at(4), tq); err != nil || len(p.Tickers) != 1 || p.Tickers[0].Name != "v4" || inner.tickerCalls.Load() != 1 {
			t.Fatalf("tickers at v4: %+v %v, %d calls", p, err, inner.tickerCalls.Load())
		}
	}
	inner.version.Store(5)
	if p, err := c.Tickers(at(5), tq); err != nil || p.Tickers[0].Name != "v5" || inner.tickerCalls.Load() != 2 {
		t.Fatalf("tickers at v5: %+v %v", p, err)
	}
	// Without a version the store is asked every time.
	if p, err := c.Tickers(context.Background(), tq); err != nil || p.Tickers[0].Name != "v5" || inner.tickerCalls.Load() != 3 {
		t.Fatalf("tickers without version: %+v %v", p, err)
	}
}
