package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Redis key prefixes, one for each sort of page.
const (
	eodPrefix      = "marketdata:eod:"
	intradayPrefix = "marketdata:intraday:"
)

// redisLayer keeps encoded pages under (data version, query digest), for
// every instance to share. Its memory is bounded whatever Redis's
// maxmemory says: every entry expires within the TTL and none is larger
// than maxEntry, so Redis holds at most (distinct misses per TTL) ×
// maxEntry bytes of pages.
type redisLayer struct {
	rdb      redis.UniversalClient
	ttl      time.Duration
	maxEntry int
	// oversize counts pages served but not stored for their size.
	oversize prometheus.Counter
}

// DefaultMaxEntryBytes is the largest entry kept in Redis unless
// WithMaxEntryBytes says otherwise: a full page of 1,000 EOD bars is
// about 280 KB.
const DefaultMaxEntryBytes = 1 << 20

// NewRedis returns the Redis-backed cache around inner, at the versions
// that versions tells. rdb should be made by NewRedisClient, which makes
// every call obey its context's deadline.
func NewRedis(inner marketdata.Store, rdb redis.UniversalClient, versions Versions, o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = 5 * time.Minute
	}
	s := newStore(inner, versions, newL1(L1MaxItems, L1MaxBytes, o.TTL), "redis", o)
	s.redis = &redisLayer{rdb: rdb, ttl: o.TTL, maxEntry: DefaultMaxEntryBytes,
		oversize: prometheus.NewCounter(prometheus.CounterOpts{Name: "marketdata_cache_oversize_total",
			Help: "Pages served but not written to Redis because they exceed the entry size cap.", ConstLabels: prometheus.Labels{"backend": "redis"}})}
	if o.Registry != nil {
		o.Registry.MustRegister(s.redis.oversize)
	}
	return s
}

// WithMaxEntryBytes caps the size of one Redis entry at n bytes (positive):
// a larger page is served, and kept in process memory, but not written.
// It returns s.
func (s *Store) WithMaxEntryBytes(n int) *Store {
	if s.redis != nil && n > 0 {
		s.redis.maxEntry = n
	}
	return s
}

// L1MaxItems bounds the entry count of the in-process layer in front of
// Redis.
const L1MaxItems = 4096

// RedisConn names the Redis to connect to, in one of three modes: URL (one
// server), SentinelAddrs with SentinelMaster (the primary that Sentinel
// names, followed across failovers), or ClusterAddrs (seed nodes of a
// Redis Cluster). Password authenticates to the data nodes of the latter
// two; a URL carries its own.
type RedisConn struct {
	URL              string
	SentinelAddrs    []string
	SentinelMaster   string
	SentinelPassword string
	ClusterAddrs     []string
	Password         string
}

// NewUniversalClient connects to conn with a client whose calls end at
// their context's deadline (go-redis ignores deadlines unless told) and
// that does not retry: the cache's own timeout and fallback handle a slow
// or absent server. In Cluster mode a redirect (MOVED, ASK) is still
// followed, since that is routing, not a retry.
func NewUniversalClient(conn RedisConn, timeout time.Duration) (redis.UniversalClient, error) {
	io := max(timeout*4, 200*time.Millisecond)
	switch {
	case len(conn.ClusterAddrs) > 0:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: conn.ClusterAddrs, Password: conn.Password, ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: io, ReadTimeout: io, WriteTimeout: io, PoolTimeout: io,
		}), nil
	case len(conn.SentinelAddrs) > 0:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: conn.SentinelMaster, SentinelAddrs: conn.SentinelAddrs, SentinelPassword: conn.SentinelPassword,
			Password: conn.Password, ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: io, ReadTimeout: io, WriteTimeout: io, PoolTimeout: io,
		}), nil
	}
	rdb, err := NewRedisClient(conn.URL, timeout)
	if err != nil {
		return nil, err
	}
	return rdb, nil
}

// NewRedisClient parses a redis:// URL into a single-server client set up
// as NewUniversalClient describes.
func NewRedisClient(rawURL string, timeout time.Duration) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", errors.New("malformed URL"))
	}
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	opts.DialTimeout = max(timeout*4, 200*time.Millisecond)
	opts.ReadTimeout = opts.DialTimeout
	opts.WriteTimeout = opts.ReadTimeout
	opts.PoolTimeout = opts.ReadTimeout
	return redis.NewClient(opts), nil
}

func entryKey(prefix string, version int64, key string) string {
	return prefix + strconv.FormatInt(version, 10) + ":" + key
}

func (r *redisLayer) get(ctx context.Context, key string) ([]byte, bool, error) {
	entry, err := r.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cache get: %w", err)
	}
	return entry, true, nil
}

// store keeps entry for life (the TTL, or less for a page of a session
// still trading). An entry over the size cap is not kept (and counted);
// nor is one with no life left, which Redis would keep forever (SET with
// no expiry).
func (r *redisLayer) store(ctx context.Context, key string, entry []byte, life time.Duration) error {
	if len(entry) > r.maxEntry {
		r.oversize.Inc()
		return nil
	}
	ttl := min(life, r.ttl)
	if ttl <= 0 {
		return nil
	}
	if err := r.rdb.Set(ctx, key, entry, ttl).Err(); err != nil {
		return fmt.Errorf("cache store: %w", err)
	}
	return nil
}

func (r *redisLayer) status(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		return "unavailable"
	}
	return "ok"
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
	return eodjson.Decoded(b[12:], int(binary.BigEndian.Uint32(b[8:])), int64(binary.BigEndian.Uint64(b))), nil
}
