// Package cache is a cache-aside decorator of marketdata.Store for EOD
// queries. It keeps pages already encoded (eodjson.Page), so a hit
// costs one cache round trip and no database work, encoding or reflection.
//
// Keys are the normalised query's digest plus the data version that every
// import bumps: an import makes every older entry unreachable at once, so
// no client reads stale prices after it. With Redis, the version is read in
// the same round trip as the entry (one Lua script). Without Redis, an
// in-process LRU checks the version against the database on every lookup:
// another process's import is seen at once, for the price of one
// primary-key read instead of the EOD query.
//
// The cache never fails a request: a cache error or a call slower than the
// configured timeout falls back to the store (logged at most every 10 s and
// counted), and after an error the cache is bypassed for a second, then
// tried again, so it resumes by itself. Concurrent misses of the same key
// share one store query (singleflight). The shared query belongs to no one
// caller: it runs detached from their contexts with a deadline of its own
// (Options.QueryTimeout), and each caller waits for it on its own context,
// so a caller who gives up gets its own error and never fails the others.
package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// backend stores encoded entries under (data version, key).
type backend interface {
	// lookup returns the current data version and the entry of key at that
	// version; ok is false on a miss. A version of -1 means unknown.
	lookup(ctx context.Context, key string) (version int64, entry []byte, ok bool, err error)
	store(ctx context.Context, version int64, key string, entry []byte) error
	status(ctx context.Context) string
}

// entryGetter reads an entry at a version already known.
type entryGetter interface {
	get(ctx context.Context, version int64, key string) (entry []byte, ok bool, err error)
}

// Store caches EOD queries of an inner store; every other method is the
// inner store's.
type Store struct {
	marketdata.Store
	backend backend
	// entries and l1 are set when the backend can be asked for an entry at
	// a known version (Redis): the in-process layer in front of it.
	entries entryGetter
	l1      *l1
	timeout time.Duration
	// queryTimeout bounds shared store queries (see shared).
	queryTimeout time.Duration
	group        singleflight.Group
	log          *slog.Logger
	metrics      *metrics
	now          func() time.Time
	// bypassUntil (unix nanos) skips the cache for a moment after an error.
	bypassUntil atomic.Int64
	lastLog     atomic.Int64
}

// Options configure a Store.
type Options struct {
	// TTL is how long an entry lives; the data version, not the TTL, is
	// what keeps answers fresh.
	TTL time.Duration
	// Timeout bounds each cache call (tens of milliseconds).
	Timeout time.Duration
	// QueryTimeout bounds a store query shared by concurrent misses, which
	// no caller's deadline bounds any more; default 30 s. The service sets
	// its request timeout.
	QueryTimeout time.Duration
	Logger       *slog.Logger
	Registry     prometheus.Registerer
}

func newStore(inner marketdata.Store, b backend, kind string, o Options) *Store {
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 30 * time.Second
	}
	return &Store{Store: inner, backend: b, timeout: o.Timeout, queryTimeout: o.QueryTimeout, log: o.Logger, metrics: newMetrics(o.Registry, kind), now: time.Now}
}

// shared runs fn once for all concurrent callers of key. fn runs on a
// context detached from every caller's cancellation (it keeps the first
// caller's values) with the store's query timeout: the work is everyone's,
// so no one caller going away may end it. Each caller waits on its own ctx
// and, when that ends first, returns its own error while the others keep
// waiting.
func (s *Store) shared(ctx context.Context, key string, fn func(context.Context) (any, error)) (any, error) {
	ch := s.group.DoChan(key, func() (any, error) {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.queryTimeout)
		defer cancel()
		return fn(wctx)
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Status reports the cache for /readyz: "ok", "unavailable" or "in-process".
func (s *Store) Status(ctx context.Context) string { return s.backend.status(ctx) }

// EOD answers from the cache like EncodedEOD, decoding the cached bytes:
// the HTTP layer uses EncodedEOD and never pays for this.
func (s *Store) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	enc, err := s.EncodedEOD(ctx, q)
	if err != nil {
		return marketdata.EODPage{}, err
	}
	return decodePage(enc)
}

// EncodedEOD returns the encoded page of q from the cache, or from the
// inner store on a miss or a cache failure. When ctx carries the data
// version (marketdata.WithDataVersion), the in-process layer is tried
// first and Redis is asked for the entry alone.
func (s *Store) EncodedEOD(ctx context.Context, q marketdata.EODQuery) (eodjson.Page, error) {
	if v, ok := marketdata.DataVersionFrom(ctx); ok && s.l1 != nil {
		return s.encodedAt(ctx, q, v)
	}
	key := q.CacheKey()
	version := int64(-1)
	if s.now().UnixNano() < s.bypassUntil.Load() {
		s.metrics.fallbacks.Inc()
	} else {
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		v, entry, ok, err := s.backend.lookup(cctx, key)
		cancel()
		switch {
		case err != nil:
			s.failed("lookup", err)
		case ok:
			if enc, err := decodeEntry(entry); err == nil {
				s.metrics.hits.Inc()
				return s.remember(v, q, enc), nil
			}
			// A corrupt entry is a miss; the fresh one overwrites it.
			version = v
		default:
			version = v
		}
	}
	return s.fill(ctx, q, key, version)
}

// encodedAt is EncodedEOD at a data version already read from Redis.
func (s *Store) encodedAt(ctx context.Context, q marketdata.EODQuery, v int64) (eodjson.Page, error) {
	l1Key := l1EODKey(v, q)
	if val, ok := s.l1.get(l1Key); ok {
		s.metrics.hits.Inc()
		return val.(eodjson.Page), nil
	}
	key := q.CacheKey()
	version := int64(-1)
	if s.now().UnixNano() < s.bypassUntil.Load() {
		s.metrics.fallbacks.Inc()
	} else {
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		entry, ok, err := s.entries.get(cctx, v, key)
		cancel()
		switch {
		case err != nil:
			s.failed("lookup", err)
		case ok:
			if enc, err := decodeEntry(entry); err == nil {
				s.metrics.hits.Inc()
				enc = enc.Memoized()
				s.l1.put(l1Key, enc, len(enc.Data))
				return enc, nil
			}
			version = v
		default:
			version = v
		}
	}
	return s.fill(ctx, q, key, version)
}

// fill answers a miss from the inner store and caches the page at
// version (not at all when the version is unknown).
func (s *Store) fill(ctx context.Context, q marketdata.EODQuery, key string, version int64) (eodjson.Page, error) {
	s.metrics.misses.Inc()
	// Misses of the same key at the same version share one store query.
	// Callers at an unknown version (cache down) share it too.
	res, err := s.shared(ctx, strconv.FormatInt(version, 10)+":"+key, func(ctx context.Context) (any, error) {
		page, err := s.Store.EOD(ctx, q)
		if err != nil {
			return nil, err
		}
		enc := eodjson.Encode(page)
		if version >= 0 {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
			if err := s.backend.store(cctx, version, key, encodeEntry(enc)); err != nil {
				s.failed("store", err)
			}
			cancel()
			enc = s.remember(version, q, enc)
		}
		return enc, nil
	})
	if err != nil {
		return eodjson.Page{}, err
	}
	return res.(eodjson.Page), nil
}

// remember keeps a page in the in-process layer, when there is one.
func (s *Store) remember(version int64, q marketdata.EODQuery, enc eodjson.Page) eodjson.Page {
	if s.l1 != nil && version >= 0 {
		enc = enc.Memoized()
		s.l1.put(l1EODKey(version, q), enc, len(enc.Data))
	}
	return enc
}

func l1EODKey(version int64, q marketdata.EODQuery) string {
	return strconv.FormatInt(version, 10) + "|" + q.CanonicalKey()
}

// Tickers answers from the in-process layer when ctx carries the data
// version (ticker metadata changes only with an import, like prices), else
// from the inner store.
func (s *Store) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	v, ok := marketdata.DataVersionFrom(ctx)
	if !ok || s.l1 == nil {
		return s.Store.Tickers(ctx, q)
	}
	key := strconv.FormatInt(v, 10) + "|" + q.CanonicalKey()
	if val, ok := s.l1.get(key); ok {
		return val.(marketdata.TickerPage), nil
	}
	res, err := s.shared(ctx, key, func(ctx context.Context) (any, error) {
		page, err := s.Store.Tickers(ctx, q)
		if err != nil {
			return nil, err
		}
		size := 64
		for _, t := range page.Tickers {
			size += 96 + len(t.Name) + len(t.Symbol)
		}
		s.l1.put(key, page, size)
		return page, nil
	})
	if err != nil {
		return marketdata.TickerPage{}, err
	}
	return res.(marketdata.TickerPage), nil
}

// failed records a cache failure: the request goes on to the store, the
// cache is skipped for a second, and the failure is logged at most every
// 10 s.
func (s *Store) failed(op string, err error) {
	s.metrics.errors.WithLabelValues(op).Inc()
	s.metrics.fallbacks.Inc()
	now := s.now()
	s.bypassUntil.Store(now.Add(time.Second).UnixNano())
	if last := s.lastLog.Load(); now.Unix()-last >= 10 && s.lastLog.CompareAndSwap(last, now.Unix()) && s.log != nil {
		s.log.Warn("cache unavailable, answering from the database", "op", op, "err", err)
	}
}

// An entry is the page's total (8 bytes), its count (4 bytes) and the
// encoded records.
func encodeEntry(enc eodjson.Page) []byte {
	b := make([]byte, 12, 12+len(enc.Data))
	binary.BigEndian.PutUint64(b, uint64(enc.Total))
	binary.BigEndian.PutUint32(b[8:], uint32(enc.Count))
	return append(b, enc.Data...)
}

var errCorrupt = errors.New("corrupt cache entry")

func decodeEntry(b []byte) (eodjson.Page, error) {
	if len(b) < 14 || b[12] != '[' || b[len(b)-1] != ']' {
		return eodjson.Page{}, errCorrupt
	}
	return eodjson.Page{Total: int64(binary.BigEndian.Uint64(b)), Count: int(binary.BigEndian.Uint32(b[8:])), Data: b[12:]}, nil
}

type metrics struct {
	hits, misses, fallbacks prometheus.Counter
	errors                  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, kind string) *metrics {
	labels := prometheus.Labels{"backend": kind}
	m := &metrics{
		hits:      prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_hits_total", Help: "EOD queries answered from the cache.", ConstLabels: labels}),
		misses:    prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_misses_total", Help: "EOD queries answered by the database.", ConstLabels: labels}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_fallbacks_total", Help: "EOD queries sent to the database because the cache failed or was being bypassed after a failure.", ConstLabels: labels}),
		errors:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marketdata_cache_errors_total", Help: "Failed or timed-out cache calls by operation.", ConstLabels: labels}, []string{"op"}),
	}
	// Series exist from the start, so dashboards see 0 rather than nothing.
	m.errors.WithLabelValues("lookup")
	m.errors.WithLabelValues("store")
	if reg != nil {
		reg.MustRegister(m.hits, m.misses, m.fallbacks, m.errors)
	}
	return m
}

func decodePage(enc eodjson.Page) (marketdata.EODPage, error) {
	bars, err := eodjson.DecodeBars(enc.Data)
	if err != nil {
		return marketdata.EODPage{}, fmt.Errorf("decode cached page: %w", err)
	}
	return marketdata.EODPage{Bars: bars, Total: enc.Total}, nil
}
