package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounds of UsageSyncOptions.Interval (MARKETDATA_USAGE_SYNC_INTERVAL).
const (
	DefaultUsageSyncInterval = 5 * time.Second
	MinUsageSyncInterval     = time.Second
	MaxUsageSyncInterval     = 5 * time.Minute
)

// UsageStore keeps the durable copy of the monthly usage counters
// (marketdatadb's key_usage table). The consumer owns the interface.
type UsageStore interface {
	// LoadUsage returns the copies of keyIDs' counters in month (YYYY-MM),
	// or of every key's when keyIDs is nil.
	LoadUsage(ctx context.Context, month string, keyIDs []string) (map[string]int64, error)
	// SaveUsage raises the copies of the counters in month to used, never
	// lowering one.
	SaveUsage(ctx context.Context, month string, used map[string]int64) error
}

// reconcileScript reads a key's usage counter for the durable copy and,
// unless the counter is known to have survived since the copy was last
// reconciled with it, raises it to the copy: counter := max(counter,
// durable). The mark (a key beside the counter) is that knowledge: Redis
// loses it with the counter, so a counter found without its mark is one
// Redis may have lost, restarted from zero, and the copy restores it. A
// counter with its mark is never raised, so tokens leased and given back
// since the copy are not counted twice. Set, not added: a repeated call
// changes nothing.
//
// KEYS: usage key, mark key. ARGV: durable count, mark lifetime (ms).
// Reply: {counter after the call, 1 when it was raised else 0}.
var reconcileScript = redis.NewScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {used, 0}
end
local durable = tonumber(ARGV[1])
local raised = 0
if durable > used then
  redis.call('SET', KEYS[1], durable)
  used, raised = durable, 1
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return {used, raised}
`)

// UsageSync keeps the monthly usage counters durable: Redis may lose them
// (a restart without persistence, a failover to an empty replica), and
// then every key would get its quota again.
//
// Every interval it copies into the store the counters that this
// replica's limiter changed since the last copy (each key's limiter tells
// it, through touch), raising a copy, never lowering it; at start, and as
// soon as a copy finds a counter lost, it raises every counter of the month
// to its copy (reconcileScript). What a loss can still cost is in the
// package comment (# Durable usage).
type UsageSync struct {
	rdb      redis.UniversalClient
	store    UsageStore
	interval time.Duration
	log      *slog.Logger
	now      func() time.Time
	lastLog  atomic.Int64

	mu      sync.Mutex
	touched map[string]struct{}
}

// UsageSyncOptions configure NewUsageSync.
type UsageSyncOptions struct {
	// Interval between copies: DefaultUsageSyncInterval when zero, within
	// MinUsageSyncInterval and MaxUsageSyncInterval.
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

// NewUsageSync returns the sync of rdb's usage counters with store. Pass
// it to the limiter (RedisOptions.Usage, LeasedOptions.Usage) and keep Run
// running.
func NewUsageSync(rdb redis.UniversalClient, store UsageStore, o UsageSyncOptions) *UsageSync {
	if o.Interval <= 0 {
		o.Interval = DefaultUsageSyncInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &UsageSync{rdb: rdb, store: store, interval: min(max(o.Interval, MinUsageSyncInterval), MaxUsageSyncInterval),
		log: o.Logger, now: o.Now, touched: map[string]struct{}{}}
}

// touch records that keyID's counter changed, for the next copy. A nil
// sync records nothing.
func (u *UsageSync) touch(keyID string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.touched[keyID] = struct{}{}
	u.mu.Unlock()
}

// Run raises the month's counters to their copies, then copies the
// changed counters every interval until ctx ends, and once more then.
func (u *UsageSync) Run(ctx context.Context) {
	u.attempt(ctx, u.Reconcile)
	tick := time.NewTicker(u.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			u.attempt(context.WithoutCancel(ctx), u.Copy)
			return
		case <-tick.C:
			u.attempt(ctx, u.Copy)
		}
	}
}

// attempt runs fn within an interval (at least 5 s), logging its failure
// at most every 10 s: the next run tries again.
func (u *UsageSync) attempt(ctx context.Context, fn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(ctx, max(u.interval, 5*time.Second))
	defer cancel()
	if err := fn(ctx); err != nil {
		now := u.now().Unix()
		if last := u.lastLog.Load(); now-last >= 10 && u.lastLog.CompareAndSwap(last, now) && u.log != nil {
			u.log.Warn("monthly usage not copied to the database; retried", "err", err)
		}
	}
}

// Copy copies the counters changed since the last copy into the store,
// after raising any that Redis lost to its copy; when one was lost, it
// reconciles the whole month too. On failure the keys are kept for the
// next copy.
func (u *UsageSync) Copy(ctx context.Context) error {
	u.mu.Lock()
	touched := u.touched
	u.touched = map[string]struct{}{}
	u.mu.Unlock()
	if len(touched) == 0 {
		return nil
	}
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	month, _, _ := monthWindow(u.now())
	lost, err := u.sync(ctx, month, ids)
	if err != nil {
		u.mu.Lock()
		for _, id := range ids {
			u.touched[id] = struct{}{}
		}
		u.mu.Unlock()
		return err
	}
	if lost {
		// Redis lost counters: raise every other key's before it is used.
		return u.Reconcile(ctx)
	}
	return nil
}

// Reconcile raises every counter of the month that Redis lost to its copy.
func (u *UsageSync) Reconcile(ctx context.Context) error {
	month, _, _ := monthWindow(u.now())
	_, err := u.sync(ctx, month, nil)
	return err
}

// sync reconciles the counters of ids in month (all the month's copies
// when ids is nil) and saves what it read. lost reports a counter that
// was raised: Redis had lost it.
func (u *UsageSync) sync(ctx context.Context, month string, ids []string) (lost bool, err error) {
	durable, err := u.store.LoadUsage(ctx, month, ids)
	if err != nil {
		return false, fmt.Errorf("sync usage: %w", err)
	}
	if ids == nil {
		for id := range durable {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	markTTL := u.markLifetime()
	cmds := make([]*redis.Cmd, len(ids))
	_, _ = u.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = reconcileScript.Run(ctx, pipe, []string{usageKey(id, month), markKey(id, month)}, durable[id], markTTL)
		}
		return nil
	})
	used := make(map[string]int64, len(ids))
	for i, id := range ids {
		res, err := cmds[i].Int64Slice()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// A fresh or flushed Redis: Run on a pipeline sends EVALSHA only.
			res, err = reconcileScript.Run(ctx, u.rdb, []string{usageKey(id, month), markKey(id, month)}, durable[id], markTTL).Int64Slice()
		}
		if err == nil && len(res) != 2 {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		if err != nil {
			return false, fmt.Errorf("sync usage: %w", err)
		}
		used[id] = res[0]
		lost = lost || res[1] == 1
	}
	if err := u.store.SaveUsage(ctx, month, used); err != nil {
		return false, fmt.Errorf("sync usage: %w", err)
	}
	return lost, nil
}

// markLifetime keeps a mark to a day past the month's end, after which
// the month's counter is gone too.
func (u *UsageSync) markLifetime() int64 {
	_, reset, _ := monthWindow(u.now())
	return (reset + 24*time.Hour).Milliseconds()
}

// markKey is the mark of keyID's counter in month (see reconcileScript),
// in the slot of the counter.
func markKey(keyID, month string) string { return usageKey(keyID, month) + ":durable" }
