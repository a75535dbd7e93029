package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
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
	indexCalls  atomic.Int64
	lookupCalls atomic.Int64
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

func (s *countingStore) Indices(_ context.Context, q marketdata.IndexQuery) (marketdata.IndexPage, error) {
	s.indexCalls.Add(1)
	v := s.version.Load()
	return marketdata.IndexPage{Total: 1, Indices: []marketdata.IndexQuote{{Ticker: marketdata.Ticker{Symbol: q.Symbol}, Close: float64(v)}}}, nil
}

func (s *countingStore) Ticker(_ context.Context, symbol string) (marketdata.Ticker, error) {
	s.lookupCalls.Add(1)
	if symbol == "NOPE" {
		return marketdata.Ticker{}, marketdata.ErrNotFound
	}
	return marketdata.Ticker{Symbol: symbol, Name: "v" + strconv.FormatInt(s.version.Load(), 10)}, nil
}

// versionAt is a data version a test sets; negative is unknown.
type versionAt struct{ v atomic.Int64 }

func (a *versionAt) Current() (int64, bool) { v := a.v.Load(); return v, v >= 0 }

func at(v int64) *versionAt {
	a := &versionAt{}
	a.v.Store(v)
	return a
}

func (c *l1) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func query(sym string) marketdata.EODQuery {
	return marketdata.EODQuery{Symbols: []string{sym}, Sort: marketdata.SortDesc, Limit: 100}
}

// page is what a test reads back from an encoded page.
type page struct {
	Total int64
	Bars  []struct {
		Symbol string  `json:"symbol"`
		Close  float64 `json:"close"`
	}
}

func mustEOD(t *testing.T, c *Store, q marketdata.EODQuery) page {
	t.Helper()
	enc, err := c.EncodedEOD(context.Background(), q)
	if err != nil {
		t.Fatalf("EncodedEOD: %v", err)
	}
	p := page{Total: enc.Total}
	if err := json.Unmarshal(enc.Data, &p.Bars); err != nil || len(p.Bars) != enc.Count {
		t.Fatalf("page %s (count %d): %v", enc.Data, enc.Count, err)
	}
	return p
}

func newRedisCache(t *testing.T, url string, inner marketdata.Store, versions Versions, timeout time.Duration) *Store {
	t.Helper()
	return newCacheOn(t, RedisConn{URL: url}, inner, versions, timeout)
}

// newRedisCacheAt is newRedisCache over a counting store, both at data
// version v.
func newRedisCacheAt(t *testing.T, v int64) (*countingStore, *versionAt, *Store) {
	t.Helper()
	inner := &countingStore{}
	inner.version.Store(v)
	versions := at(v)
	return inner, versions, newRedisCache(t, testenv.Redis(t), inner, versions, time.Second)
}

// imported stands for an import of version v: the store's data version
// and the one the cache is told move together.
func imported(inner *countingStore, versions *versionAt, v int64) {
	inner.version.Store(v)
	versions.v.Store(v)
}

// newCacheOn is newRedisCache on any Redis deployment.
func newCacheOn(t *testing.T, conn RedisConn, inner marketdata.Store, versions Versions, timeout time.Duration) *Store {
	t.Helper()
	rdb, err := NewUniversalClient(conn, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return NewRedis(inner, rdb, versions, Options{TTL: time.Minute, Timeout: timeout, Registry: prometheus.NewRegistry()})
}

// forEachRedis runs fn on one Redis server (a leased database) and on a
// Redis Cluster of three primaries and three replicas.
func forEachRedis(t *testing.T, fn func(t *testing.T, conn RedisConn)) {
	t.Run("single", func(t *testing.T) { fn(t, RedisConn{URL: testenv.Redis(t)}) })
	t.Run("cluster", func(t *testing.T) { fn(t, RedisConn{ClusterAddrs: testenv.RedisCluster(t).Addrs}) })
}

func TestRedisCacheVersioning(t *testing.T) { forEachRedis(t, checkVersioning) }

func checkVersioning(t *testing.T, conn RedisConn) {
	inner := &countingStore{}
	inner.version.Store(7)
	versions := at(7)
	c := newCacheOn(t, conn, inner, versions, time.Second)

	p := mustEOD(t, c, query("GOOG"))
	if p.Total != 17 || p.Bars[0].Symbol != "GOOG" || inner.calls.Load() != 1 {
		t.Fatalf("first: %+v, %d calls", p, inner.calls.Load())
	}
	p = mustEOD(t, c, query("GOOG"))
	if p.Total != 17 || inner.calls.Load() != 1 {
		t.Fatalf("second should hit: %+v, %d calls", p, inner.calls.Load())
	}
	if testutil.ToFloat64(c.metrics.hits) != 1 || testutil.ToFloat64(c.metrics.misses) != 1 {
		t.Errorf("hits %v misses %v", testutil.ToFloat64(c.metrics.hits), testutil.ToFloat64(c.metrics.misses))
	}
	// Another instance, with an empty process layer, finds the page in
	// Redis.
	other := newCacheOn(t, conn, inner, versions, time.Second)
	if p := mustEOD(t, other, query("GOOG")); p.Total != 17 || inner.calls.Load() != 1 {
		t.Fatalf("other instance: %+v, %d calls", p, inner.calls.Load())
	}

	// An import commits version 8: the old entry is unreachable at once,
	// although its TTL has not run out.
	imported(inner, versions, 8)
	p = mustEOD(t, c, query("GOOG"))
	if p.Total != 18 || p.Bars[0].Close != 8 || inner.calls.Load() != 2 {
		t.Fatalf("after the bump: %+v, %d calls", p, inner.calls.Load())
	}
	// Errors are not cached and pass through.
	if _, err := c.EncodedEOD(context.Background(), query("NONE")); !errors.Is(err, marketdata.ErrNoValidSymbols) {
		t.Errorf("error lost: %v", err)
	}
}

// TestHitInMemoryMakesNoNetworkCall: with Redis cut, a page held in
// process memory is still a hit, and nothing fails: the hit never asked
// Redis.
func TestHitInMemoryMakesNoNetworkCall(t *testing.T) {
	proxy := testenv.RedisProxy(t)
	inner := &countingStore{}
	c := newRedisCache(t, proxy.URL, inner, at(0), 50*time.Millisecond)
	mustEOD(t, c, query("GOOG"))
	proxy.Stop()
	for range 3 {
		mustEOD(t, c, query("GOOG"))
	}
	if inner.calls.Load() != 1 || testutil.ToFloat64(c.metrics.hits) != 3 {
		t.Errorf("%d store calls, %v hits; want 1 and 3", inner.calls.Load(), testutil.ToFloat64(c.metrics.hits))
	}
	if n := testutil.ToFloat64(c.metrics.errors.WithLabelValues("lookup")); n != 0 {
		t.Errorf("%v failed Redis lookups: a hit in memory must not call Redis", n)
	}
}

func TestConcurrentMissesCollapse(t *testing.T) { forEachRedis(t, checkMissesCollapse) }

func checkMissesCollapse(t *testing.T, conn RedisConn) {
	inner := &countingStore{gate: make(chan struct{})}
	c := newCacheOn(t, conn, inner, at(0), time.Second)
	const n = 8
	var wg sync.WaitGroup
	results := make([]page, n)
	for i := range n {
		wg.Go(func() { results[i] = mustEOD(t, c, query("MSFT")) })
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

// TestRedisFailureFallsBackAndResumes: with the version known but Redis
// failing or slow, a page missing from process memory is answered by the
// store, Redis is bypassed for a second, then used again.
func TestRedisFailureFallsBackAndResumes(t *testing.T) {
	proxy := testenv.RedisProxy(t)
	inner := &countingStore{}
	c := newRedisCache(t, proxy.URL, inner, at(0), 50*time.Millisecond)
	clock := time.Now()
	var mu sync.Mutex
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }

	proxy.Stop()
	for i := range 5 {
		if p := mustEOD(t, c, query("SYM"+strconv.Itoa(i))); len(p.Bars) != 1 {
			t.Fatalf("request %d during the outage: %+v", i, p)
		}
	}
	if testutil.ToFloat64(c.metrics.errors.WithLabelValues("lookup")) != 1 || testutil.ToFloat64(c.metrics.fallbacks) != 5 {
		t.Errorf("outage not counted: errors %v fallbacks %v", testutil.ToFloat64(c.metrics.errors.WithLabelValues("lookup")), testutil.ToFloat64(c.metrics.fallbacks))
	}
	if c.Status(context.Background()) != "unavailable" {
		t.Error("status during the outage")
	}

	// A slow Redis is an outage too: the request does not wait for it.
	proxy.Start()
	proxy.SetLatency(300 * time.Millisecond)
	advance(2 * time.Second)
	start := time.Now()
	if p := mustEOD(t, c, query("SLOW")); len(p.Bars) != 1 {
		t.Fatalf("slow redis: %+v", p)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("a slow Redis held the request for %v", d)
	}
	proxy.SetLatency(0)

	// Back to normal: another instance's page is found in Redis again.
	advance(2 * time.Second)
	other := newRedisCache(t, proxy.URL, inner, at(0), time.Second)
	mustEOD(t, other, query("SHARED"))
	calls := inner.calls.Load()
	var resumed bool
	for range 50 {
		mustEOD(t, c, query("SHARED"))
		if inner.calls.Load() == calls {
			resumed = true
			break
		}
		calls = inner.calls.Load()
		advance(2 * time.Second) // a failure right after restart bypasses for a second
	}
	if !resumed {
		t.Fatal("cache did not resume")
	}
}

// TestUnknownVersionBypasses: while the data version cannot be read
// (Redis down), every query goes to the store, even one whose page is in
// process memory; once Redis is back the cache serves hits again.
func TestUnknownVersionBypasses(t *testing.T) {
	proxy := testenv.RedisProxy(t)
	rdb, err := NewRedisClient(proxy.URL, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	inner := &countingStore{}
	inner.version.Store(4)
	// The version turns unknown only when neither Redis nor the database
	// can tell it: with Redis alone down, the database's is used.
	var dbDown atomic.Bool
	versions := dataversion.NewRedis(rdb, func(context.Context) (int64, error) {
		if dbDown.Load() {
			return 0, errors.New("database down")
		}
		return inner.version.Load(), nil
	}, dataversion.Options{PollInterval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); versions.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	waitVersion := func(known bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for _, ok := versions.Current(); ok != known; _, ok = versions.Current() {
			if time.Now().After(deadline) {
				t.Fatalf("version known = %v, want %v", ok, known)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	c := NewRedis(inner, rdb, versions, Options{TTL: time.Minute, Timeout: 50 * time.Millisecond, Registry: prometheus.NewRegistry()})
	waitVersion(true)
	mustEOD(t, c, query("GOOG"))
	mustEOD(t, c, query("GOOG"))
	if inner.calls.Load() != 1 {
		t.Fatalf("cache not working before the outage: %d calls", inner.calls.Load())
	}

	dbDown.Store(true)
	proxy.Stop()
	waitVersion(false)
	// Counted from here: under load, a Redis call before the outage can
	// pass its 50 ms timeout and count a fallback of its own.
	before := testutil.ToFloat64(c.metrics.fallbacks)
	for i := range 3 {
		if p := mustEOD(t, c, query("GOOG")); p.Total != 14 || inner.calls.Load() != int64(2+i) {
			t.Fatalf("request %d with the version unknown: %+v, %d calls", i, p, inner.calls.Load())
		}
	}
	if n := testutil.ToFloat64(c.metrics.fallbacks) - before; n != 3 {
		t.Errorf("fallbacks during the outage %v, want 3", n)
	}

	dbDown.Store(false)
	proxy.Start()
	waitVersion(true)
	calls := inner.calls.Load()
	mustEOD(t, c, query("GOOG"))
	if inner.calls.Load() != calls {
		t.Errorf("no hit once the version is known again")
	}
}

func TestLocalCache(t *testing.T) {
	inner := &countingStore{}
	versions := at(0)
	reg := prometheus.NewRegistry()
	c := NewLocal(inner, versions, 2, Options{TTL: time.Minute, Registry: reg})
	mustEOD(t, c, query("A"))
	mustEOD(t, c, query("A"))
	if inner.calls.Load() != 1 {
		t.Fatalf("local cache missed: %d calls", inner.calls.Load())
	}
	// What process memory answers and holds is exported.
	if n := testutil.ToFloat64(c.metrics.memoryHits); n != 1 {
		t.Errorf("memory hits %v, want 1", n)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(`# HELP marketdata_cache_memory_bytes Bytes of the pages kept in process memory (their estimated size).
# TYPE marketdata_cache_memory_bytes gauge
marketdata_cache_memory_bytes{backend="local"} %d
`, c.memory.size())), "marketdata_cache_memory_bytes"); err != nil || c.memory.size() == 0 {
		t.Errorf("memory bytes (%d held): %v", c.memory.size(), err)
	}
	// Another process imports: the database's version moves on.
	imported(inner, versions, 1)
	if p := mustEOD(t, c, query("A")); p.Bars[0].Close != 1 || inner.calls.Load() != 2 {
		t.Fatalf("stale after import: %+v", p)
	}
	mustEOD(t, c, query("B"))
	mustEOD(t, c, query("C"))
	if n := c.memory.len(); n != 2 {
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

// TestTickersAtVersion: ticker pages are kept in process memory at the
// data version, an import (a greater version) is seen at once, and with
// the version unknown the store is asked every time.
func TestTickersAtVersion(t *testing.T) {
	inner, versions, c := newRedisCacheAt(t, 4)
	tq := marketdata.TickerQuery{Symbols: []string{"MSFT"}, Limit: 10}
	for range 2 {
		if p, err := c.Tickers(context.Background(), tq); err != nil || len(p.Tickers) != 1 || p.Tickers[0].Name != "v4" || inner.tickerCalls.Load() != 1 {
			t.Fatalf("tickers at v4: %+v %v, %d calls", p, err, inner.tickerCalls.Load())
		}
	}
	imported(inner, versions, 5)
	if p, err := c.Tickers(context.Background(), tq); err != nil || p.Tickers[0].Name != "v5" || inner.tickerCalls.Load() != 2 {
		t.Fatalf("tickers at v5: %+v %v", p, err)
	}
	versions.v.Store(-1)
	if p, err := c.Tickers(context.Background(), tq); err != nil || p.Tickers[0].Name != "v5" || inner.tickerCalls.Load() != 3 {
		t.Fatalf("tickers with the version unknown: %+v %v", p, err)
	}
}

// TestIndicesAtVersion holds the computed index quotes to the rule of all
// reference data: cached until the next import of its kind (the data
// version), and read through while the version is unknown.
func TestIndicesAtVersion(t *testing.T) {
	inner, versions, c := newRedisCacheAt(t, 4)
	q := marketdata.IndexQuery{Symbol: "GSPC.INDX", Limit: 1}
	for range 2 {
		if p, err := c.Indices(context.Background(), q); err != nil || len(p.Indices) != 1 || p.Indices[0].Close != 4 || inner.indexCalls.Load() != 1 {
			t.Fatalf("indices at v4: %+v %v, %d calls", p, err, inner.indexCalls.Load())
		}
	}
	if p, err := c.Indices(context.Background(), marketdata.IndexQuery{Limit: 1, Offset: 1}); err != nil || p.Indices[0].Ticker.Symbol != "" || inner.indexCalls.Load() != 2 {
		t.Fatalf("another query shares the entry: %+v %v, %d calls", p, err, inner.indexCalls.Load())
	}
	imported(inner, versions, 5)
	if p, err := c.Indices(context.Background(), q); err != nil || p.Indices[0].Close != 5 || inner.indexCalls.Load() != 3 {
		t.Fatalf("indices at v5: %+v %v", p, err)
	}
	versions.v.Store(-1)
	if p, err := c.Indices(context.Background(), q); err != nil || p.Indices[0].Close != 5 || inner.indexCalls.Load() != 4 {
		t.Fatalf("indices with the version unknown: %+v %v", p, err)
	}
}

// TestTickerLookupAtVersion: one ticker's lookup is cached like a list, and
// a miss (404) is asked again, never remembered.
func TestTickerLookupAtVersion(t *testing.T) {
	inner, versions, c := newRedisCacheAt(t, 4)
	for range 2 {
		if tk, err := c.Ticker(context.Background(), "GOOG"); err != nil || tk.Name != "v4" || inner.lookupCalls.Load() != 1 {
			t.Fatalf("ticker at v4: %+v %v, %d calls", tk, err, inner.lookupCalls.Load())
		}
	}
	imported(inner, versions, 5)
	if tk, err := c.Ticker(context.Background(), "GOOG"); err != nil || tk.Name != "v5" || inner.lookupCalls.Load() != 2 {
		t.Fatalf("ticker at v5: %+v %v", tk, err)
	}
	for range 2 {
		if _, err := c.Ticker(context.Background(), "NOPE"); err != marketdata.ErrNotFound {
			t.Fatalf("NOPE: %v", err)
		}
	}
	if n := inner.lookupCalls.Load(); n != 4 {
		t.Errorf("%d calls, want 4: a miss is not remembered", n)
	}
}
