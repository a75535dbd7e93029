// Package cache is a cache-aside decorator of marketdata.Store for EOD
// pages, which it keeps encoded (eodjson.Page), and intraday pages: a hit
// costs no database work, encoding or reflection, and when the page is in
// process memory no network call either. Both take one lookup path
// (lookup, with a pageKind for each); an intraday page of a session still
// trading lives shorter than the TTL, in both layers (intraday.go).
//
// Keys are the normalised query plus the data version that every import
// bumps, which the cache reads from process memory (Versions, kept by
// package dataversion within its staleness bound): an import makes every
// older entry unreachable at once. While the version is unknown (Redis or
// the database cannot tell it), the cache is bypassed and every query
// answered by the store.
//
// An import of EOD bars records what it changed (per symbol, the earliest
// date changed), so most EOD pages outlive it (carry.go): a page missing at
// the current version is looked up at the version the process served
// before, and when no change since reaches its symbols' dates it is
// stored at the current version and served, as exact as a page read
// again. Any doubt is a miss: changes unknown (an import of tickers,
// intraday bars or anything else records none), not read yet, or too
// many. A page is never served at a version older than the one in force.
//
// Every Store has an in-process LRU. With Redis, the Redis layer behind it
// shares pages between instances: a page missing from process memory costs
// one Redis GET before the store is asked. Ticker pages, which change only
// with an import too, are kept in process memory alone.
//
// The cache never fails a request: a Redis error or a call slower than the
// configured timeout falls back to the store (logged at most every 10 s and
// counted), and after an error Redis is bypassed for a second, then tried
// again, so it resumes by itself. Concurrent misses of the same key share
// one store query (singleflight). The shared query belongs to no one
// caller: it runs detached from their contexts with a deadline of its own
// (Options.QueryTimeout), and each caller waits for it on its own context,
// so a caller who gives up gets its own error and never fails the others.
// Once the last caller waiting for it has given up, the query is
// cancelled: work nobody waits for would only load the database.
//
// The in-process LRU (l1.go) is our own, not
// hashicorp/golang-lru/v2/expirable, on measurement (benchstat
// of BenchmarkEncodedEODHit/local, -count 6, 2 shared cores under load):
// a hit allocates nothing with ours and 80 B in 1 allocation through
// expirable (p=0.002), since its Get takes the key as a string where ours
// looks the []byte key up without converting it; the times, 348 ns ± 74%
// and 394 ns ± 96%, were too noisy to tell apart. expirable also bounds
// entries only, not bytes, which LocalMaxBytes and L1MaxBytes need, and
// starts a cleanup goroutine per cache that never ends.
package cache

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Versions tells the data version in force, from process memory; ok is
// false while it is unknown.
type Versions interface {
	Current() (v int64, ok bool)
}

// Store caches the EOD, intraday and ticker pages of an inner store. EOD
// pages are served encoded, by EncodedEOD; EOD and every other method are
// the inner store's, uncached.
type Store struct {
	marketdata.Store
	versions Versions
	memory   *l1
	// redis is the layer shared between instances; nil without Redis.
	redis   *redisLayer
	timeout time.Duration
	// queryTimeout bounds shared store queries (see shared).
	queryTimeout time.Duration
	group        singleflight.Group
	// flights are the shared queries in progress by key, with their
	// waiting callers; flightsMu also orders group's calls (see shared).
	flightsMu sync.Mutex
	flights   map[string]*flight
	log       *slog.Logger
	metrics   *metrics
	now       func() time.Time
	// carry carries EOD pages across the versions that left them
	// unchanged; nil without Options.Changes.
	carry *carrier
	// bypassUntil (unix nanos) skips Redis for a moment after an error.
	bypassUntil atomic.Int64
	lastLog     atomic.Int64
}

// Options configure a Store.
type Options struct {
	// TTL is how long an entry lives; the data version, not the TTL, is
	// what keeps answers fresh.
	TTL time.Duration
	// Timeout bounds each Redis call (tens of milliseconds).
	Timeout time.Duration
	// QueryTimeout bounds a store query shared by concurrent misses, which
	// no caller's deadline bounds any more; default 30 s. The service sets
	// its request timeout.
	QueryTimeout time.Duration
	// Changes tells what each import changed, so that EOD pages it left
	// unchanged are kept across it (carry.go); nil keys every page on the
	// version alone.
	Changes  Changes
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

func newStore(inner marketdata.Store, versions Versions, memory *l1, kind string, o Options) *Store {
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 30 * time.Second
	}
	if o.Registry != nil {
		o.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marketdata_cache_memory_bytes",
			Help: "Bytes of the pages kept in process memory (their estimated size).", ConstLabels: prometheus.Labels{"backend": kind}},
			func() float64 { return float64(memory.size()) }))
	}
	return &Store{Store: inner, versions: versions, memory: memory, timeout: o.Timeout, queryTimeout: o.QueryTimeout,
		log: o.Logger, metrics: newMetrics(o.Registry, kind), now: time.Now, flights: map[string]*flight{},
		carry: newCarrier(o.Changes, memory.ttl, o.Logger)}
}

// flight is one shared store query: the context it runs on and how many
// callers wait for it.
type flight struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
}

// shared runs fn once for all concurrent callers of key. fn runs on a
// context detached from every caller's cancellation (it keeps the first
// caller's values) with the store's query timeout: the work is everyone's,
// so no one caller going away may end it. Each caller waits on its own ctx
// and, when that ends first, returns its own error while the others keep
// waiting; when the last one leaves, fn's context is cancelled and key
// forgotten, so that a caller coming later starts afresh rather than join
// cancelled work. Joining and leaving hold flightsMu, so a caller never
// joins a flight its last waiter is cancelling.
func (s *Store) shared(ctx context.Context, key string, fn func(context.Context) (any, error)) (any, error) {
	s.flightsMu.Lock()
	f := s.flights[key]
	if f == nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.queryTimeout)
		f = &flight{ctx: wctx, cancel: cancel}
		s.flights[key] = f
	}
	f.waiters++
	ch := s.group.DoChan(key, func() (any, error) { return fn(f.ctx) })
	s.flightsMu.Unlock()
	select {
	case r := <-ch:
		s.leave(key, f)
		return r.Val, r.Err
	case <-ctx.Done():
		s.leave(key, f)
		return nil, ctx.Err()
	}
}

// leave ends one caller's wait for f; the last one cancels f's work (done
// or not: its context is released either way).
func (s *Store) leave(key string, f *flight) {
	s.flightsMu.Lock()
	defer s.flightsMu.Unlock()
	if f.waiters--; f.waiters > 0 {
		return
	}
	f.cancel()
	delete(s.flights, key)
	s.group.Forget(key)
}

// Status reports the cache for /readyz: "ok", "unavailable" or "in-process".
func (s *Store) Status(ctx context.Context) string {
	if s.redis == nil {
		return "in-process"
	}
	return s.redis.status(ctx)
}

// EncodedEOD returns the encoded page of q: from process memory, else from
// Redis, else from the inner store, which fills both. A hit in process
// memory makes no network call and does not allocate its key.
func (s *Store) EncodedEOD(ctx context.Context, q marketdata.EODQuery) (eodjson.Page, error) {
	v, ok := s.versions.Current()
	var buf [160]byte
	key := q.AppendCanonicalKey(appendVersion(buf[:0], v))
	return lookup[eodjson.Page](ctx, s, eodPages{q: q, inner: s.Store}, v, ok, key)
}

// pageKind is what the lookup path needs to know of one sort of page kept
// in both layers (EOD, intraday), so that every sort shares that path, its
// invalidation by data version and its Redis fallback.
type pageKind[P any] interface {
	// redisKey is the page's Redis key at data version v.
	redisKey(v int64) string
	// load reads the page from the inner store.
	load(ctx context.Context) (P, error)
	// life is how long p, read from the store, may be served (at most ttl).
	life(p P, ttl time.Duration) time.Duration
	// size estimates p's bytes in process memory.
	size(p P) int
	// encode and decode are p's Redis entry, with when it was read.
	encode(p P, at time.Time) ([]byte, error)
	decode(b []byte) (p P, at time.Time, err error)
	// unchangedBy tells whether the page is certainly the same after
	// changes c (carryForward).
	unchangedBy(c marketdata.EODChanges) bool
}

// lookup answers k's page, whose in-process key at data version v is key,
// from process memory, else from Redis, else from its page at the
// version served before when no change since reaches it (carryForward),
// else from the inner store, which fills both; while the data version is
// unknown (!known), from the inner store alone. The caller builds key, on
// its stack: built here, through K's methods, it would escape and
// allocate on every hit.
func lookup[P any, K pageKind[P]](ctx context.Context, s *Store, k K, v int64, known bool, key []byte) (P, error) {
	if !known {
		s.metrics.fallbacks.Inc()
		return fill[P](ctx, s, k, -1, string(key))
	}
	if val, ok := s.memory.get(key); ok {
		s.metrics.hits.Inc()
		s.metrics.memoryHits.Inc()
		return val.(P), nil
	}
	// Every version the process serves misses process memory first: here
	// the carrier learns of each, whichever layer answers.
	prev, changes := s.carry.at(v, s.now())
	if s.redis != nil {
		if s.now().UnixNano() < s.bypassUntil.Load() {
			s.metrics.fallbacks.Inc()
			return fill[P](ctx, s, k, v, string(key))
		}
		if p, expires, ok := fromRedis[P](ctx, s, k, v); ok {
			s.metrics.hits.Inc()
			s.memory.putUntil(string(key), p, k.size(p), expires)
			return p, nil
		}
	}
	if p, ok := carryForward[P](ctx, s, k, v, string(key), prev, changes); ok {
		s.metrics.hits.Inc()
		s.metrics.carried.Inc()
		return p, nil
	}
	return fill[P](ctx, s, k, v, string(key))
}

// fromRedis reads k's page at version v from Redis, with when it stops
// being servable; a failure, a corrupt or an outlived entry count as a
// miss.
func fromRedis[P any, K pageKind[P]](ctx context.Context, s *Store, k K, v int64) (p P, expires time.Time, ok bool) {
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	entry, ok, err := s.redis.get(cctx, k.redisKey(v))
	cancel()
	if err != nil {
		s.failed("lookup", err)
		return p, expires, false
	}
	if !ok {
		return p, expires, false
	}
	p, at, err := k.decode(entry)
	if err != nil {
		// A corrupt entry is a miss; the fresh one overwrites it.
		return p, expires, false
	}
	now := s.now()
	if at.IsZero() {
		at = now // the entry's kind does not age by read time
	}
	expires = at.Add(k.life(p, s.memory.ttl))
	if !now.Before(expires) {
		return p, expires, false
	}
	return p, expires, true
}

// fill answers a miss from the inner store and caches the page under key
// at version v, for its life, or not at all when v is unknown (negative).
func fill[P any, K pageKind[P]](ctx context.Context, s *Store, k K, v int64, key string) (P, error) {
	s.metrics.misses.Inc()
	// Misses of the same key at the same version share one store query.
	// Callers at an unknown version (cache bypassed) share it too.
	res, err := s.shared(ctx, key, func(ctx context.Context) (any, error) {
		p, err := k.load(ctx)
		if err != nil {
			return nil, err
		}
		if v >= 0 {
			keep(ctx, s, k, v, key, p, s.now())
		}
		return p, nil
	})
	if err != nil {
		var zero P
		return zero, err
	}
	return res.(P), nil
}

// keep stores p, read at the time at, under key at version v in both
// layers, for its life.
func keep[P any, K pageKind[P]](ctx context.Context, s *Store, k K, v int64, key string, p P, at time.Time) {
	life := k.life(p, s.memory.ttl)
	s.memory.putUntil(key, p, k.size(p), at.Add(life))
	if s.redis == nil || s.now().UnixNano() < s.bypassUntil.Load() {
		return
	}
	entry, err := k.encode(p, at)
	if err != nil {
		return // kept in process memory only
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if err := s.redis.store(cctx, k.redisKey(v), entry, life); err != nil {
		s.failed("store", err)
	}
}

// eodPages are encoded EOD pages: they change only with an import, so they
// live for the TTL.
type eodPages struct {
	q     marketdata.EODQuery
	inner marketdata.Store
}

func (k eodPages) redisKey(v int64) string { return entryKey(eodPrefix, v, k.q.CacheKey()) }

func (k eodPages) load(ctx context.Context) (eodjson.Page, error) {
	page, err := k.inner.EOD(ctx, k.q)
	if err != nil {
		return eodjson.Page{}, err
	}
	return eodjson.Encode(page).Memoized(), nil
}

func (eodPages) life(_ eodjson.Page, ttl time.Duration) time.Duration { return ttl }

func (eodPages) size(p eodjson.Page) int { return len(p.Data) }

func (eodPages) encode(p eodjson.Page, _ time.Time) ([]byte, error) { return encodeEntry(p), nil }

func (eodPages) decode(b []byte) (eodjson.Page, time.Time, error) {
	p, err := decodeEntry(b)
	return p.Memoized(), time.Time{}, err
}

func (k eodPages) unchangedBy(c marketdata.EODChanges) bool { return !c.Affects(k.q) }

// appendVersion starts an in-process key with the data version.
func appendVersion(b []byte, v int64) []byte {
	b = strconv.AppendInt(b, v, 10)
	return append(b, '|')
}

// Tickers answers from process memory at the current data version (ticker
// metadata changes only with an import, like prices), else from the inner
// store.
func (s *Store) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	return memoized(ctx, s, q.AppendCanonicalKey, s.Store.Tickers, q, func(page marketdata.TickerPage) int {
		size := 64
		for _, t := range page.Tickers {
			size += 96 + len(t.Name) + len(t.Symbol)
		}
		return size
	})
}

// Indices answers the computed index quotes the way Tickers answers: from
// process memory at the current data version, since they change only with
// an import of EOD bars, like all reference data here.
func (s *Store) Indices(ctx context.Context, q marketdata.IndexQuery) (marketdata.IndexPage, error) {
	key := func(b []byte) []byte {
		b = append(b, "indices|"...)
		b = append(b, q.Symbol...)
		b = append(b, '|')
		b = strconv.AppendInt(b, int64(q.Limit), 10)
		b = append(b, '|')
		return strconv.AppendInt(b, int64(q.Offset), 10)
	}
	return memoized(ctx, s, key, s.Store.Indices, q, func(page marketdata.IndexPage) int {
		size := 64
		for _, x := range page.Indices {
			size += 256 + len(x.Ticker.Name) + len(x.Ticker.Symbol)
		}
		return size
	})
}

// Ticker answers one ticker's lookup as Tickers answers a list.
func (s *Store) Ticker(ctx context.Context, symbol string) (marketdata.Ticker, error) {
	key := func(b []byte) []byte { return append(append(b, "ticker|"...), symbol...) }
	return memoized(ctx, s, key, s.Store.Ticker, symbol, func(t marketdata.Ticker) int { return 160 + len(t.Name) + len(t.Symbol) })
}

// Exchange answers one exchange's lookup as Tickers answers a list.
func (s *Store) Exchange(ctx context.Context, mic string) (marketdata.Exchange, error) {
	key := func(b []byte) []byte { return append(append(b, "exchange|"...), mic...) }
	return memoized(ctx, s, key, s.Store.Exchange, mic, func(x marketdata.Exchange) int { return 256 + len(x.Name) })
}

// LoadedDatasets answers as Tickers does: which datasets are loaded
// changes only with an import.
func (s *Store) LoadedDatasets(ctx context.Context) (marketdata.LoadedDatasets, error) {
	key := func(b []byte) []byte { return append(b, "datasets"...) }
	return memoized(ctx, s, key, func(ctx context.Context, _ struct{}) (marketdata.LoadedDatasets, error) {
		return s.Store.LoadedDatasets(ctx)
	},
		struct{}{}, func(d marketdata.LoadedDatasets) int { return 64 + 32*len(d) })
}

// Commodity answers one commodity's series as Tickers answers a list:
// reference data, kept until the next import.
func (s *Store) Commodity(ctx context.Context, name string) (marketdata.CommoditySeries, error) {
	key := func(b []byte) []byte { return append(append(b, "commodity|"...), name...) }
	return memoized(ctx, s, key, s.Store.Commodity, name, func(c marketdata.CommoditySeries) int { return 64 + 48*len(c.Prices) })
}

// CompanyRatings answers a symbol's ratings as Commodity answers a series.
func (s *Store) CompanyRatings(ctx context.Context, symbol string) ([]marketdata.Rating, error) {
	key := func(b []byte) []byte { return append(append(b, "ratings|"...), symbol...) }
	return memoized(ctx, s, key, s.Store.CompanyRatings, symbol, func(rs []marketdata.Rating) int { return 64 + 192*len(rs) })
}

// BondCountries answers a page of bond countries as Tickers answers a
// list.
func (s *Store) BondCountries(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return memoized(ctx, s, pageKey("bonds|", p), s.Store.BondCountries, p, namePageSize)
}

// pageKey writes the key of a page of a list named by prefix.
func pageKey(prefix string, p marketdata.ListPage) func([]byte) []byte {
	return func(b []byte) []byte {
		b = strconv.AppendInt(append(b, prefix...), int64(p.Limit), 10)
		return strconv.AppendInt(append(b, '|'), int64(p.Offset), 10)
	}
}

func namePageSize(n marketdata.NamePage) int { return 64 + 48*len(n.Names) }

// BondYields answers a country's yields as Commodity answers a series.
func (s *Store) BondYields(ctx context.Context, country string) ([]marketdata.BondYield, error) {
	key := func(b []byte) []byte { return append(append(b, "bond|"...), country...) }
	return memoized(ctx, s, key, s.Store.BondYields, country, func(ys []marketdata.BondYield) int { return 64 + 96*len(ys) })
}

// ETFs answers a page of ETF tickers as Tickers answers a list.
func (s *Store) ETFs(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return memoized(ctx, s, pageKey("etfs|", p), s.Store.ETFs, p, namePageSize)
}

// ETFHoldings answers an ETF's filing as Commodity answers a series.
func (s *Store) ETFHoldings(ctx context.Context, q marketdata.ETFQuery) (marketdata.ETFFilingHoldings, error) {
	key := func(b []byte) []byte {
		b = append(append(b, "etf|"...), q.From.Format(time.DateOnly)...)
		b = append(append(b, '|'), q.To.Format(time.DateOnly)...)
		// Last, so that the ticker's text cannot be read as another field.
		return append(append(b, '|'), q.Ticker...)
	}
	return memoized(ctx, s, key, s.Store.ETFHoldings, q, func(f marketdata.ETFFilingHoldings) int { return 512 + 320*len(f.Holdings) })
}

// EDGARCompanies answers a page of EDGAR companies as Tickers answers a
// list.
func (s *Store) EDGARCompanies(ctx context.Context, q marketdata.EDGARQuery) (marketdata.EDGARPage, error) {
	key := func(b []byte) []byte {
		// The name last, so that its text cannot be read as another field.
		return append(append(pageKey("edgar|", q.Page)(b), '|'), q.Name...)
	}
	return memoized(ctx, s, key, s.Store.EDGARCompanies, q, func(p marketdata.EDGARPage) int {
		size := 64
		for _, c := range p.Companies {
			size += 64 + len(c.Submissions)
		}
		return size
	})
}

// EDGARCompany answers one company's documents as Ticker answers a
// lookup.
func (s *Store) EDGARCompany(ctx context.Context, cik string) (marketdata.EDGARCompany, error) {
	key := func(b []byte) []byte { return append(append(b, "cik|"...), cik...) }
	return memoized(ctx, s, key, s.Store.EDGARCompany, cik, func(c marketdata.EDGARCompany) int {
		return 64 + len(c.Submissions) + len(c.Facts)
	})
}

// Frame answers a frame's facts as Commodity answers a series.
func (s *Store) Frame(ctx context.Context, q marketdata.FrameQuery) ([]marketdata.FramePoint, error) {
	key := func(b []byte) []byte {
		for _, f := range []string{"frame", q.Taxonomy, q.Tag, q.Unit, q.Frame} {
			b = append(append(b, f...), '|')
		}
		return b
	}
	return memoized(ctx, s, key, s.Store.Frame, q, func(ps []marketdata.FramePoint) int { return 64 + 160*len(ps) })
}

// memoized is reference data (what changes only with an import) read
// through process memory at the current data version: appendKey writes
// the query's key, read asks the inner store on a miss (concurrent misses
// share one call), and size weighs an answer for the memory bound. While
// the version is unknown it reads through.
func memoized[Q, T any](ctx context.Context, s *Store, appendKey func([]byte) []byte, read func(context.Context, Q) (T, error), q Q, size func(T) int) (T, error) {
	v, ok := s.versions.Current()
	if !ok {
		return read(ctx, q)
	}
	var buf [160]byte
	kb := appendKey(appendVersion(buf[:0], v))
	if val, ok := s.memory.get(kb); ok {
		return val.(T), nil
	}
	key := string(kb)
	res, err := s.shared(ctx, key, func(ctx context.Context) (any, error) {
		page, err := read(ctx, q)
		if err != nil {
			return nil, err
		}
		s.memory.put(key, page, size(page))
		return page, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return res.(T), nil
}

// failed records a Redis failure: the request goes on to the store, Redis
// is skipped for a second, and the failure is logged at most every 10 s.
func (s *Store) failed(op string, err error) {
	s.metrics.errors.WithLabelValues(op).Inc()
	s.metrics.fallbacks.Inc()
	now := s.now()
	s.bypassUntil.Store(now.Add(time.Second).UnixNano())
	if last := s.lastLog.Load(); now.Unix()-last >= 10 && s.lastLog.CompareAndSwap(last, now.Unix()) && s.log != nil {
		s.log.Warn("cache unavailable, answering from the database", "op", op, "err", err)
	}
}

type metrics struct {
	hits, misses, fallbacks, memoryHits, carried prometheus.Counter
	errors                                       *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, kind string) *metrics {
	labels := prometheus.Labels{"backend": kind}
	m := &metrics{
		hits:       prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_hits_total", Help: "EOD and intraday queries answered from the cache.", ConstLabels: labels}),
		misses:     prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_misses_total", Help: "EOD and intraday queries answered by the database.", ConstLabels: labels}),
		fallbacks:  prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_fallbacks_total", Help: "EOD and intraday queries sent to the database because the cache failed or was being bypassed after a failure.", ConstLabels: labels}),
		memoryHits: prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_memory_hits_total", Help: "EOD and intraday queries answered from process memory, with no network call (counted as hits too).", ConstLabels: labels}),
		carried:    prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_carried_total", Help: "EOD queries answered from their page of the data version before an import that left it unchanged (counted as hits too).", ConstLabels: labels}),
		errors:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marketdata_cache_errors_total", Help: "Failed or timed-out cache calls by operation.", ConstLabels: labels}, []string{"op"}),
	}
	// Series exist from the start, so dashboards see 0 rather than nothing.
	m.errors.WithLabelValues("lookup")
	m.errors.WithLabelValues("store")
	if reg != nil {
		reg.MustRegister(m.hits, m.misses, m.fallbacks, m.memoryHits, m.carried, m.errors)
	}
	return m
}
