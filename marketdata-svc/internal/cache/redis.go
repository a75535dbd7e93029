package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// VersionKey is the Redis key holding the current data version; imports
// raise it (set-if-greater) after their commit.
const VersionKey = "marketdata:data_version"

const entryPrefix = "marketdata:eod:"

// lookupScript reads the data version and, in the same round trip, the
// entry of the query at that version.
var lookupScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return {false, false} end
return {v, redis.call('GET', ARGV[1] .. v .. ':' .. ARGV[2])}
`)

// raiseScript sets the version unless Redis already holds a greater one,
// and returns the version in force.
var raiseScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1] end
return tostring(cur)
`)

type redisBackend struct {
	rdb     redis.UniversalClient
	ttl     time.Duration
	version func(ctx context.Context) (int64, error)
}

// NewRedis returns the Redis-backed cache around inner. rdb should be made
// by NewRedisClient, which makes every call obey its context's deadline.
func NewRedis(inner marketdata.Store, rdb redis.UniversalClient, o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = 5 * time.Minute
	}
	b := &redisBackend{rdb: rdb, ttl: o.TTL, version: inner.DataVersion}
	s := newStore(inner, b, "redis", o)
	s.entries = b
	s.l1 = newL1(L1MaxItems, L1MaxBytes, o.TTL)
	return s
}

// L1MaxItems bounds the entry count of the in-process layer in front of
// Redis.
const L1MaxItems = 4096

func (b *redisBackend) get(ctx context.Context, version int64, key string) ([]byte, bool, error) {
	entry, err := b.rdb.Get(ctx, entryPrefix+strconv.FormatInt(version, 10)+":"+key).Bytes()
	if err == redis.Nil {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cache get: %w", err)
	}
	return entry, true, nil
}

// NewRedisClient parses a redis:// URL into a client whose calls end at
// their context's deadline (go-redis ignores deadlines unless told) and
// that does not retry: the cache's own timeout and fallback handle a slow
// or absent server.
func NewRedisClient(rawURL string, timeout time.Duration) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", errors.New("malformed URL"))
	}
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	opts.DialTimeout = max(timeout*4, 200*time.Millisecond)
	opts.ReadTimeout = max(timeout*4, 200*time.Millisecond)
	opts.WriteTimeout = opts.ReadTimeout
	opts.PoolTimeout = opts.ReadTimeout
	return redis.NewClient(opts), nil
}

func (b *redisBackend) lookup(ctx context.Context, key string) (int64, []byte, bool, error) {
	res, err := lookupScript.Run(ctx, b.rdb, []string{VersionKey}, entryPrefix, key).Slice()
	if err != nil {
		return -1, nil, false, fmt.Errorf("cache lookup: %w", err)
	}
	if len(res) != 2 {
		return -1, nil, false, fmt.Errorf("cache lookup: unexpected reply")
	}
	vs, _ := res[0].(string)
	if vs == "" {
		// No version in Redis yet (fresh Redis, or flushed): take the
		// database's and publish it. The entry is a miss either way.
		v, err := b.version(ctx)
		if err != nil {
			return -1, nil, false, fmt.Errorf("cache lookup: data version: %w", err)
		}
		vs, err = raiseScript.Run(ctx, b.rdb, []string{VersionKey}, v).Text()
		if err != nil {
			return -1, nil, false, fmt.Errorf("cache lookup: publish version: %w", err)
		}
	}
	v, err := strconv.ParseInt(vs, 10, 64)
	if err != nil {
		return -1, nil, false, fmt.Errorf("cache lookup: bad version %q", vs)
	}
	entry, ok := res[1].(string)
	return v, []byte(entry), ok, nil
}

func (b *redisBackend) store(ctx context.Context, version int64, key string, entry []byte) error {
	if err := b.rdb.Set(ctx, entryPrefix+strconv.FormatInt(version, 10)+":"+key, entry, b.ttl).Err(); err != nil {
		return fmt.Errorf("cache store: %w", err)
	}
	return nil
}

func (b *redisBackend) status(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		return "unavailable"
	}
	return "ok"
}

// PublishVersion raises the data version in Redis to v (never lowers it),
// making every cache entry of an older version unreachable. The import
// commands call it after their commit.
func PublishVersion(ctx context.Context, rdb redis.UniversalClient, v int64) error {
	if err := raiseScript.Run(ctx, rdb, []string{VersionKey}, v).Err(); err != nil {
		return fmt.Errorf("publish data version: %w", err)
	}
	return nil
}
