package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Lease sizing (see the package comment for what they bound).
const (
	// rateDivisor: a lease holds at most a tenth of a second's worth.
	rateDivisor = 10
	// quotaDivisor: a lease holds at most 1% of the monthly quota.
	quotaDivisor = 100
	// maxLeaseSize caps a lease whatever the limits. Only keys of 10,000/s
	// or 100,000 a month reach it, and the bounds of the package comment
	// are in batches, so the cap only sets how often a busy key's replica
	// goes to Redis: at 100, a key served 15,000 times a second took 150
	// lease round trips a second, 2.7% of the service's CPU in a profile
	// of the bench's eod_hit; at 1000 it takes 15.
	maxLeaseSize = 1000
	// shrinkDivisor: no lease takes more than 1/16 of what is left of the
	// month, so the last 16 requests of a quota are leased one at a time.
	shrinkDivisor = 16
	// refusalHold is how long a replica answers a refusal from memory
	// before asking Redis again: it bounds the round trips a flood of
	// refused requests costs, and the delay before tokens given back by
	// another replica are found.
	refusalHold = 100 * time.Millisecond
	// DefaultLeaseLifetime is how long leased tokens may be spent before
	// they are given back.
	DefaultLeaseLifetime = 500 * time.Millisecond
)

// giveBackLua returns ARGV[3] unspent tokens: it moves the GCRA TAT back by
// their emission time (never before now) and takes them off the month's
// counter (never below zero). It is the head of both scripts, so a lease
// can carry the return of the expired one in the same round trip.
//
// KEYS: rate key, usage key. ARGV: rate per second (0: none), monthly
// quota (0: none), tokens given back.
const giveBackLua = `
local rate = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
local back = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = (t[1] - 1483228800) + (t[2] / 1000000)
if back > 0 then
  if rate > 0 then
    local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
    if tat > now then
      tat = math.max(tat - back / rate, now)
      if tat > now then
        redis.call('SET', KEYS[1], string.format('%.6f', tat), 'PX', math.ceil((tat - now) * 1000))
      else
        redis.call('DEL', KEYS[1])
      end
    end
  end
  if quota > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
    if redis.call('DECRBY', KEYS[2], back) < 0 then
      redis.call('SET', KEYS[2], 0)
    end
  end
end
`

// returnScript gives unspent tokens back (giveBackLua alone).
var returnScript = redis.NewScript(giveBackLua + "return 1\n")

// leaseScript reserves up to ARGV[4] tokens of both limits at once, after
// giving ARGV[3] back. GCRA grants k tokens while tat + k/rate - 1 <= now
// (redis_rate's AllowN, burst one second) and advances the TAT by k/rate;
// the quota grants at most what is left, and at most left/ARGV[5] (at
// least 1), then adds them to the month's counter, so the sum of
// outstanding leases never exceeds what is left. As in limitScript, a
// refusal by either limit takes nothing from the other, the counter has no
// expiry and the first count of a month deletes the previous month's.
//
// KEYS: rate key, usage key, previous month's usage key.
// ARGV: rate, quota, tokens given back, tokens wanted, shrink divisor.
// Reply: {outcome (1 granted, 0 rate refused, 2 quota refused), granted,
// rate tokens left in Redis, retry_after seconds, reset_after seconds,
// month's counter}.
var leaseScript = redis.NewScript(giveBackLua + `
local n = tonumber(ARGV[4])
local tat = now
if rate > 0 then
  tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  local k = math.floor((now + 1 - tat) * rate + 1e-3)
  if k < 1 then
    return {0, 0, 0, tostring(tat + 1 / rate - 1 - now), tostring(tat - now), 0}
  end
  if k < n then n = k end
end
local used = 0
if quota > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  local left = quota - used
  if left < 1 then
    return {2, 0, 0, '-1', tostring(tat - now), used}
  end
  local cap = math.max(1, math.floor(left / tonumber(ARGV[5])))
  if cap < n then n = cap end
  used = redis.call('INCRBY', KEYS[2], n)
  if used == n then redis.call('DEL', KEYS[3]) end
end
local remaining, reset = 0, 0
if rate > 0 then
  tat = tat + n / rate
  reset = tat - now
  remaining = math.floor((now + 1 - tat) * rate + 1e-3)
  redis.call('SET', KEYS[1], string.format('%.6f', tat), 'PX', math.ceil(reset * 1000))
end
return {1, n, remaining, '-1', tostring(reset), used}
`)

// Leased limits a key's requests with tokens leased from Redis in batches
// and spent in process memory (see the package comment). It keeps the key
// layout of Redis, so instances in either mode share one key's limits.
type Leased struct {
	rdb      redis.UniversalClient
	timeout  time.Duration
	lifetime time.Duration
	log      *slog.Logger
	now      func() time.Time
	metrics  *metrics
	leases   *prometheus.CounterVec
	lastLog  atomic.Int64

	months monthCache

	mu   sync.RWMutex
	keys map[string]*leaseState
}

// leaseState is one key's lease on this replica. Its fields are guarded by
// its mu.
type leaseState struct {
	mu sync.Mutex
	// rate, quota and month are what the tokens were leased for; tokens of
	// other limits or another month are not spent.
	rate  int
	quota int64
	month string
	// stock is the leased tokens not yet spent, spendable until expires.
	stock   int64
	expires time.Time
	// back is expired tokens of month not yet given back: the next lease
	// carries them, or the sweep.
	back int64
	// granted is the size of the last lease: a refill starts when stock
	// falls to half of it.
	granted int64
	// The view of Redis at the last lease, for the headers.
	counter   int64     // the month's counter (every replica's leases)
	rateLeft  int64     // rate tokens Redis had left
	fullAt    time.Time // when the GCRA bucket is full again
	refusal   error     // the last refusal, answered from memory until refusedTo
	retryAt   time.Time // when the refused rate admits a request again
	refusedTo time.Time
	flight    *leaseFlight
	lastUsed  time.Time
	// forgotten is set when the sweep drops the state from the map.
	forgotten bool
}

// leaseFlight is a lease round trip in progress; done closes when its
// outcome is in the state.
type leaseFlight struct {
	done chan struct{}
	err  error
}

// LeasedOptions configure NewLeased.
type LeasedOptions struct {
	// Timeout bounds each Redis round trip; past it a request that needs
	// a lease is let through (fail open).
	Timeout time.Duration
	// Lifetime is how long leased tokens stay spendable before they are
	// given back; DefaultLeaseLifetime when zero, at most a second.
	Lifetime time.Duration
	Logger   *slog.Logger
	Registry prometheus.Registerer
	Now      func() time.Time
}

// NewLeased returns a leased limiter on rdb. Keep Run running: it gives
// back the tokens of idle keys, and all of them when it ends.
func NewLeased(rdb redis.UniversalClient, o LeasedOptions) *Leased {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	if o.Lifetime <= 0 {
		o.Lifetime = DefaultLeaseLifetime
	}
	o.Lifetime = min(o.Lifetime, time.Second)
	l := &Leased{rdb: rdb, timeout: o.Timeout, lifetime: o.Lifetime, log: o.Logger, now: o.Now,
		metrics: newMetrics(o.Registry, "redis"), keys: map[string]*leaseState{},
		leases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketdata_ratelimit_leases_total",
			Help: "Round trips of the leased limiter to Redis: leases taken (kind=lease) and unspent tokens given back alone (kind=return).",
		}, []string{"kind"}),
	}
	l.leases.WithLabelValues("lease")
	l.leases.WithLabelValues("return")
	if o.Registry != nil {
		o.Registry.MustRegister(l.leases)
	}
	return l
}

// LeaseSize is the number of tokens a lease asks for, from the key's
// limits: a tenth of a second's rate, 1% of the monthly quota, at most
// 1000 and at least 1. Redis grants fewer near the end of the quota.
func LeaseSize(rate int, quota int64) int64 {
	n := int64(maxLeaseSize)
	if rate > 0 {
		n = min(n, max(int64(rate)/rateDivisor, 1))
	}
	if quota > 0 {
		n = min(n, max(quota/quotaDivisor, 1))
	}
	return n
}

// Allow checks and counts one request of p. While the key's lease has
// tokens it answers from memory; otherwise it waits for one lease round
// trip, shared with the key's other requests on this replica. When Redis
// fails, the request is let through with Degraded set, as Redis does.
func (l *Leased) Allow(ctx context.Context, p auth.Principal) Decision {
	now := l.now()
	d := Decision{Rate: p.RatePerSecond, Quota: p.MonthlyQuota}
	month, reset, window := l.months.window(now)
	d.QuotaResetAfter, d.QuotaWindow = reset, window
	if p.RatePerSecond <= 0 && p.MonthlyQuota <= 0 {
		return d
	}
	s := l.state(p.KeyID)
	s.mu.Lock()
	for s.forgotten {
		// The sweep dropped this state between the lookup and the lock.
		s.mu.Unlock()
		s = l.state(p.KeyID)
		s.mu.Lock()
	}
	for {
		now = l.now()
		s.lastUsed = now
		s.align(p, month, now)
		if s.stock > 0 {
			s.stock--
			s.fill(&d, now)
			if s.granted > 1 && s.stock <= s.granted/2 && s.flight == nil && !now.Before(s.refusedTo) {
				l.startLease(s, p, month) // refill ahead of need
			}
			s.mu.Unlock()
			return d
		}
		if now.Before(s.refusedTo) {
			l.refuse(s, p.KeyID, &d, now)
			s.mu.Unlock()
			return d
		}
		f := s.flight
		if f == nil {
			f = l.startLease(s, p, month)
		}
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return l.degraded(d, fmt.Errorf("limits: %w", ctx.Err()))
		}
		if f.err != nil {
			return l.degraded(d, fmt.Errorf("limits: %w", f.err))
		}
		s.mu.Lock()
	}
}

// state returns keyID's lease state, creating it.
func (l *Leased) state(keyID string) *leaseState {
	l.mu.RLock()
	s := l.keys[keyID]
	l.mu.RUnlock()
	if s != nil {
		return s
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s = l.keys[keyID]
	if s == nil {
		s = &leaseState{}
		l.keys[keyID] = s
	}
	return s
}

// align drops tokens that may no longer be spent: expired ones (kept to
// be given back), those of changed limits (given back too) and last
// month's (the month's counter is gone).
func (s *leaseState) align(p auth.Principal, month string, now time.Time) {
	if s.month != month {
		s.stock, s.back, s.granted = 0, 0, 0
		s.refusedTo = time.Time{}
		s.month = month
	}
	if s.rate != p.RatePerSecond || s.quota != p.MonthlyQuota {
		// The key's limits changed: its tokens go back under the new
		// limits, which is as near as Redis can be told.
		s.back += s.stock
		s.stock, s.granted = 0, 0
		s.refusedTo = time.Time{}
		s.rate, s.quota = p.RatePerSecond, p.MonthlyQuota
	}
	if s.stock > 0 && !now.Before(s.expires) {
		s.back += s.stock
		s.stock = 0
	}
}

// fill sets d's remaining and used from the local view: what Redis had
// left at the last lease plus the tokens still held here.
func (s *leaseState) fill(d *Decision, now time.Time) {
	if s.rate > 0 {
		d.Remaining = int(min(s.rateLeft+s.stock, int64(s.rate)))
		d.ResetAfter = max(s.fullAt.Sub(now), 0)
	}
	if s.quota > 0 {
		d.Used = s.counter - s.stock
	}
}

func (l *Leased) refuse(s *leaseState, keyID string, d *Decision, now time.Time) {
	d.Err = s.refusal
	switch s.refusal {
	case ErrRateLimited:
		d.RetryAfter = max(s.retryAt.Sub(now), time.Millisecond)
		d.ResetAfter = max(s.fullAt.Sub(now), 0)
		l.metrics.refused.WithLabelValues("rate").Inc()
	default:
		d.Used, d.RetryAfter = s.counter, d.QuotaResetAfter
		l.metrics.usageRefused(keyID, now)
	}
}

// startLease starts a lease round trip for s, which the caller holds
// locked; the round trip locks s to record its outcome.
func (l *Leased) startLease(s *leaseState, p auth.Principal, month string) *leaseFlight {
	f := &leaseFlight{done: make(chan struct{})}
	s.flight = f
	back := s.back
	s.back = 0
	want := LeaseSize(p.RatePerSecond, p.MonthlyQuota)
	go l.lease(s, f, p, month, back, want)
	return f
}

func (l *Leased) lease(s *leaseState, f *leaseFlight, p auth.Principal, month string, back, want int64) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	res, err := leaseScript.Run(ctx, l.rdb, limitKeys(p.KeyID, month), max(p.RatePerSecond, 0), max(p.MonthlyQuota, 0),
		back, want, shrinkDivisor).Slice()
	l.leases.WithLabelValues("lease").Inc()
	if err == nil && len(res) != 6 {
		err = errors.New("unexpected reply")
	}
	s.mu.Lock()
	defer func() {
		s.flight = nil
		s.mu.Unlock()
		close(f.done)
	}()
	if err != nil {
		f.err = err
		if s.month == month {
			s.back += back // try again with the next lease
		}
		return
	}
	outcome, _ := res[0].(int64)
	granted, _ := res[1].(int64)
	rateLeft, _ := res[2].(int64)
	retryAfter, _ := res[3].(string)
	resetAfter, _ := res[4].(string)
	counter, _ := res[5].(int64)
	if s.month != month || s.rate != p.RatePerSecond || s.quota != p.MonthlyQuota {
		// Limits or month changed meanwhile: the next lease gives these
		// back if they still can be.
		if s.month == month {
			s.back += granted
		}
		return
	}
	now := l.now()
	s.fullAt = now.Add(seconds(resetAfter))
	switch outcome {
	case 1:
		s.stock += granted
		s.granted = granted
		s.expires = now.Add(l.lifetime)
		s.counter, s.rateLeft = counter, rateLeft
	case 0:
		s.refusal, s.retryAt = ErrRateLimited, now.Add(seconds(retryAfter))
		s.refusedTo = now.Add(min(seconds(retryAfter), refusalHold))
	default:
		s.refusal, s.counter = ErrUsageLimited, counter
		s.refusedTo = now.Add(refusalHold)
	}
}

// limitKeys are the rate key, month's usage key and the previous month's,
// as Redis names them. All three carry the key ID as hash tag {keyID}: a
// Redis Cluster keeps them in one slot, so one script may use them
// together (TestScriptKeysShareASlot).
func limitKeys(keyID, month string) []string {
	prev := month
	if t, err := time.Parse("2006-01", month); err == nil {
		prev = t.AddDate(0, -1, 0).Format("2006-01")
	}
	return []string{"rate:rate:{" + keyID + "}", usageKey(keyID, month), usageKey(keyID, prev)}
}

// usageKey is the counter of keyID's requests in month (YYYY-MM).
func usageKey(keyID, month string) string { return "usage:{" + keyID + "}:" + month }

// Run gives back the unspent tokens of expired leases every half lease
// lifetime, and forgets keys idle for a minute, until ctx ends; then it
// gives back every key's unspent tokens, so a replica that shuts down
// leaves nothing reserved.
func (l *Leased) Run(ctx context.Context) {
	tick := time.NewTicker(l.lifetime / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.awaitLeases()
			l.giveBack(true)
			return
		case <-tick.C:
			l.giveBack(false)
		}
	}
}

// awaitLeases waits for the leases in flight (each bounded by the
// timeout), so that what they bring is given back too.
func (l *Leased) awaitLeases() {
	var flights []*leaseFlight
	l.mu.RLock()
	for _, s := range l.keys {
		s.mu.Lock()
		if s.flight != nil {
			flights = append(flights, s.flight)
		}
		s.mu.Unlock()
	}
	l.mu.RUnlock()
	for _, f := range flights {
		<-f.done
	}
}

// giveBack returns the tokens of expired leases, or of all leases when
// all is set, in one pipeline.
func (l *Leased) giveBack(all bool) {
	type ret struct {
		keyID       string
		rate        int
		quota, back int64
	}
	now := l.now()
	month, _, _ := monthWindow(now)
	var rets []ret
	l.mu.Lock()
	for id, s := range l.keys {
		s.mu.Lock()
		if s.month == month && s.stock > 0 && (all || !now.Before(s.expires)) {
			s.back += s.stock
			s.stock = 0
		}
		if s.month == month && s.back > 0 && s.flight == nil {
			rets = append(rets, ret{keyID: id, rate: s.rate, quota: s.quota, back: s.back})
			s.back = 0
		}
		if s.stock == 0 && s.back == 0 && s.flight == nil && now.Sub(s.lastUsed) > time.Minute {
			s.forgotten = true
			delete(l.keys, id)
		}
		s.mu.Unlock()
	}
	l.mu.Unlock()
	if len(rets) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(l.timeout, time.Second))
	defer cancel()
	_, err := l.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, r := range rets {
			returnScript.Run(ctx, pipe, limitKeys(r.keyID, month)[:2], max(r.rate, 0), max(r.quota, 0), r.back)
		}
		return nil
	})
	l.leases.WithLabelValues("return").Add(float64(len(rets)))
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// A fresh or flushed Redis: Run on a pipeline sends EVALSHA only.
		err = returnScript.Load(ctx, l.rdb).Err()
		if err == nil {
			for _, r := range rets {
				if err = returnScript.Run(ctx, l.rdb, limitKeys(r.keyID, month)[:2], max(r.rate, 0), max(r.quota, 0), r.back).Err(); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		// Those tokens stay counted as used: short of quota, never over.
		l.warn(fmt.Errorf("give back unspent tokens: %w", err))
	}
}

func (l *Leased) degraded(d Decision, err error) Decision {
	l.metrics.errors.Inc()
	l.warn(err)
	d.Degraded = true
	d.Remaining = d.Rate
	return d
}

func (l *Leased) warn(err error) {
	now := l.now().Unix()
	if last := l.lastLog.Load(); now-last >= 10 && l.lastLog.CompareAndSwap(last, now) && l.log != nil {
		l.log.Warn("rate limiter unavailable, letting requests through", "err", err)
	}
}
