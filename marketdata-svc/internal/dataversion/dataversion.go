// Package dataversion keeps the current data version in process memory,
// for the caches that put it in their keys. Every import that changes data
// bumps the version after its commit; a cached page is built at one
// version and unreachable at any other, so the version is what keeps
// cached answers fresh, and holding it in memory is what lets a cache hit
// make no network call.
//
// With Redis, the version lives under Key. Publish raises it (never lowers
// it) and announces the new value on Channel, so that every Source learns
// of an import within a network delay: an announcement makes it re-read
// Key, which Redis keeps per database while channels are server-wide, so
// a message from a neighbour sharing the server costs one read and changes
// nothing. Pub/sub delivers at most once, and
// nothing to a subscriber that is reconnecting, so a Source also re-reads
// Key every PollInterval (250 ms by default). The staleness bound: once an
// import's Publish has returned, no Source reports an older version for
// longer than PollInterval plus one read (at most Timeout, which is
// PollInterval unless set: 500 ms in all by default), lost messages
// included. A Redis that holds no version (new, or flushed) is given the
// database's.
//
// Versions never go back. A Source reports the highest version it has
// seen, from Redis, an announcement, the database, or Observe (a read
// replica found serving a newer one): a Redis that comes back from an
// outage still holding the version from before an import, or a read that
// raced an announcement, cannot make the caches key on an older version,
// so a process that has answered from version v never again answers from
// an older cache entry. A Redis that cannot be read (down, or slower than
// Timeout) is replaced by the database for that read: the database's
// version is the one every answer read from it was built at, and the
// first read of Redis after the outage checks the database too, raising
// Redis's version when an import committed meanwhile could not announce
// itself (the import reports "not announced").
//
// Without Redis, a Source re-reads the database's version every
// PollInterval, and another process's import is seen within that bound.
//
// When no version can be read (the database unreachable too, or slower
// than Timeout), the Source reports it unknown until a read succeeds;
// caches then answer from the database. The highest version seen is kept
// meanwhile, and a version read afterwards below it is not used.
package dataversion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Key is the Redis key holding the current data version. It carries no
// expiry, so Redis's volatile-lru policy never evicts it.
const Key = "marketdata:data_version"

// Channel is the Redis pub/sub channel on which Publish announces a new
// version.
const Channel = "marketdata:data_version"

// DefaultReconcileEvery is Options.ReconcileEvery when it is not set: at
// the default poll interval, one database read per Source every 5 s.
const DefaultReconcileEvery = 20

// DefaultPollInterval is how often a Source re-reads the version when
// Options.PollInterval is not set: the bound on staleness after a lost
// pub/sub message.
const DefaultPollInterval = 250 * time.Millisecond

// unknown is the stored value of a version that could not be read.
const unknown = -1

// Options configure a Source.
type Options struct {
	// PollInterval is the period of the re-read; DefaultPollInterval when
	// zero.
	PollInterval time.Duration
	// ReconcileEvery is how many reads of Redis's version go by between
	// checks against the database's (NewRedis); DefaultReconcileEvery
	// when zero.
	ReconcileEvery int
	// Timeout bounds each call to Redis or the database; PollInterval
	// when zero, so that the staleness bound is twice the poll interval
	// (500 ms by default; one Timeout more while Redis is down, for the
	// database's read behind it). A read that takes longer makes the
	// version unknown, which sends reads to the database: slow, never
	// stale.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Source holds the data version in force. Its zero value is not usable:
// make one with NewRedis or NewDatabase, and keep Run running.
type Source struct {
	// highest is the highest version seen, -1 before the first; it is
	// the version in force while known is set.
	highest atomic.Int64
	known   atomic.Bool
	// read reads the version, each call bounded by timeout.
	read     func(ctx context.Context) (int64, error)
	watch    func(ctx context.Context, announced func())
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	lastLog  atomic.Int64
}

func newSource(read func(context.Context) (int64, error), o Options) *Source {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = o.PollInterval
	}
	s := &Source{read: read, interval: o.PollInterval, timeout: o.Timeout, log: o.Logger}
	s.highest.Store(unknown)
	return s
}

// bounded calls read with the Source's timeout.
func (s *Source) bounded(ctx context.Context, read func(context.Context) (int64, error)) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return read(ctx)
}

// NewRedis returns a Source that reads Key from rdb and listens on
// Channel. database reads the database's version, which is published when
// Redis holds none, and which stands in for Redis's while Redis cannot be
// read.
//
// Every ReconcileEvery reads, and at the first read after Redis could not
// be read, the database's version is read as well and published when it
// is ahead of Redis's: an import whose own Publish failed (Redis
// unreachable just after its commit) is then seen by every Source within
// ReconcileEvery poll intervals (5 s by default), or as soon as Redis is
// back, instead of only when cached entries expire.
func NewRedis(rdb redis.UniversalClient, database func(context.Context) (int64, error), o Options) *Source {
	every := o.ReconcileEvery
	if every <= 0 {
		every = DefaultReconcileEvery
	}
	var reads atomic.Int64
	// outage is set while Redis cannot be read.
	var outage atomic.Bool
	var s *Source
	s = newSource(func(ctx context.Context) (int64, error) {
		v, err := s.bounded(ctx, func(ctx context.Context) (int64, error) { return rdb.Get(ctx, Key).Int64() })
		missing := errors.Is(err, redis.Nil)
		if err != nil && !missing {
			outage.Store(true)
			dbv, derr := s.bounded(ctx, database)
			if derr != nil {
				return unknown, errors.Join(fmt.Errorf("read data version: %w", err), fmt.Errorf("database version: %w", derr))
			}
			return dbv, nil
		}
		if !missing && reads.Add(1)%int64(every) != 0 && !outage.Load() {
			return v, nil
		}
		dbv, err := s.bounded(ctx, database)
		if err != nil {
			if missing {
				return unknown, fmt.Errorf("database version: %w", err)
			}
			return v, nil // Redis's version stands; the next check retries
		}
		outage.Store(false)
		if missing || dbv > v {
			return s.bounded(ctx, func(ctx context.Context) (int64, error) { return Publish(ctx, rdb, dbv) })
		}
		return v, nil
	}, o)
	s.watch = func(ctx context.Context, announced func()) { subscribe(ctx, rdb, announced) }
	return s
}

// NewDatabase returns a Source that polls database, for a service without
// Redis.
func NewDatabase(database func(context.Context) (int64, error), o Options) *Source {
	var s *Source
	s = newSource(func(ctx context.Context) (int64, error) { return s.bounded(ctx, database) }, o)
	return s
}

// Current returns the version in force, the highest seen; ok is false
// while it is unknown. It reads process memory only.
func (s *Source) Current() (v int64, ok bool) {
	if !s.known.Load() {
		return unknown, false
	}
	v = s.highest.Load()
	return v, v >= 0
}

// Observe raises the version in force to v, a version the process has
// served from elsewhere (a read replica that had replayed it), so that
// the caches key on it from now on. It never lowers the version, and
// leaves an unknown version unknown.
func (s *Source) Observe(v int64) {
	s.raise(v)
}

// Refresh reads the version now. A failed read makes it unknown; a read
// below the highest seen leaves the highest in force.
func (s *Source) Refresh(ctx context.Context) error {
	v, err := s.read(ctx)
	if err != nil {
		s.known.Store(false)
		return err
	}
	s.raise(v)
	s.known.Store(true)
	return nil
}

// Run keeps the version current until ctx ends: it listens for
// announcements (with Redis) and re-reads every poll interval. Read
// failures are logged at most every 10 s.
func (s *Source) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if s.watch != nil {
		wg.Go(func() {
			s.watch(ctx, func() {
				if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
					s.warn(err)
				}
			})
		})
	}
	defer wg.Wait()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
			s.warn(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// raise moves the version forward only: a poll that read the key just
// before an announcement, or a Redis back from an outage with the version
// from before it, must not undo it.
func (s *Source) raise(v int64) {
	for {
		cur := s.highest.Load()
		if v <= cur || s.highest.CompareAndSwap(cur, v) {
			return
		}
	}
}

func (s *Source) warn(err error) {
	now := time.Now().Unix()
	if last := s.lastLog.Load(); now-last >= 10 && s.lastLog.CompareAndSwap(last, now) && s.log != nil {
		s.log.Warn("data version unknown, caches answer from the database", "err", err)
	}
}

// subscribe calls announced for every message on Channel until ctx
// ends. go-redis re-subscribes after a lost connection by itself; what is
// announced meanwhile is lost, which the poll covers.
func subscribe(ctx context.Context, rdb redis.UniversalClient, announced func()) {
	Listen(ctx, rdb, Channel, func(string) { announced() })
}

// Listen calls on with the payload of every message on channel until ctx
// ends or the subscription closes. go-redis re-subscribes after a lost
// connection by itself; what is published meanwhile is not seen, so a
// listener needs another way to catch up (the poll, a cache's TTL).
func Listen(ctx context.Context, rdb redis.UniversalClient, channel string, on func(payload string)) {
	ps := rdb.Subscribe(ctx, channel)
	defer func() { _ = ps.Close() }()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			on(m.Payload)
		}
	}
}

// publishScript raises the version unless Redis holds a greater one,
// announces a raise on the channel, and returns the version in force.
// Both happen in one step, so no Source can read the new version without
// the announcement having been sent.
var publishScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
local v = tonumber(ARGV[1])
if v > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return v
end
return cur`)

// Publish raises the version in Redis to v (never lowers it, so importers
// finishing out of order leave the newest in place), announces it to
// every Source, and returns the version Redis holds afterwards. Imports
// call it after their commit.
func Publish(ctx context.Context, rdb redis.Scripter, v int64) (int64, error) {
	held, err := publishScript.Run(ctx, rdb, []string{Key}, v, Channel).Int64()
	if err != nil {
		return unknown, fmt.Errorf("publish data version: %w", err)
	}
	return held, nil
}
