package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// callRecordTTL is how long Redis keeps a replica's last call to a
	// key, and pendingLimit how long a replica sends a call again whose
	// reply it lost; well inside it, so a call is never applied again
	// after its record expired.
	callRecordTTL = 2 * time.Minute
	pendingLimit  = 30 * time.Second
)

// leaseScript gives ARGV[3] unspent tokens back, then leases up to ARGV[4]
// more (none when 0: a give-back alone), in one atomic step.
//
// Each call is applied at most once, however often it is sent. Redis may
// apply a call whose reply then never arrives (a timeout, a cut
// connection); the replica sends that same call again, numbered ARGV[6],
// until it reads a reply, and KEYS[4] (the replica's record for the key)
// keeps the number and reply of the last call applied: a call sent again
// gets its first reply back instead of giving back or leasing twice. A
// replica has one call in flight per key and numbers them upwards, so a
// number below the record's is an old copy, answered with outcome 3 and
// applied never.
//
// The give-back moves the GCRA TAT back by the tokens' emission time
// (never before now) and takes them off the month's counter (never below
// zero). The lease grants k tokens while tat + k/rate - 1 <= now
// (redis_rate's AllowN, burst one second) and advances the TAT by k/rate;
// the quota grants at most what is left, and at most left/ARGV[5] (at
// least 1), then adds them to the month's counter, so the sum of
// outstanding leases never exceeds what is left. As in limitScript, a
// refusal by either limit takes nothing from the other, the counter has no
// expiry and the first count of a month deletes the previous month's.
//
// KEYS: rate key, usage key, previous month's usage key, call record.
// ARGV: rate, quota, tokens given back, tokens wanted, shrink divisor, call
// number, record lifetime in ms.
// Reply: {outcome (1 granted or given back, 0 rate refused, 2 quota
// refused, 3 an old copy), granted, rate tokens left in Redis (also on a
// quota refusal, which takes none), retry_after seconds, reset_after
// seconds, month's counter}.
var leaseScript = redis.NewScript(`
local seq = tonumber(ARGV[6])
local rec = redis.call('GET', KEYS[4])
if rec then
  local last = cjson.decode(rec)
  if last[1] == seq then return last[2] end
  if last[1] > seq then return {3, 0, 0, '-1', '0', 0} end
end
local function apply()
  local rate = tonumber(ARGV[1])
  local quota = tonumber(ARGV[2])
  local back = tonumber(ARGV[3])
  local n = tonumber(ARGV[4])
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
  if n < 1 then
    return {1, 0, 0, '-1', '0', 0}
  end
  local tat, k = now, 0
  if rate > 0 then
    tat = tonumber(redis.call('GET', KEYS[1]) or '0')
    if tat < now then tat = now end
    k = math.floor((now + 1 - tat) * rate + 1e-3)
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
      return {2, 0, k, '-1', tostring(tat - now), used}
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
end
local reply = apply()
redis.call('SET', KEYS[4], cjson.encode({seq, reply}), 'PX', ARGV[7])
return reply
`)

// call is one leaseScript call of a key: tokens given back, and a lease
// when want > 0. It keeps its number until its reply is read, so that a
// call whose reply was lost is sent again unchanged, which Redis applies
// at most once (see leaseScript).
type call struct {
	seq         int64
	month       string
	rate        int
	quota       int64
	back, want  int64
	firstSentAt time.Time
}

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
	// replica names this limiter's call records in Redis, and calls
	// numbers its calls (see leaseScript).
	replica string
	calls   atomic.Int64
	usage   *UsageSync

	months monthCache

	mu   sync.RWMutex
	keys map[string]*leaseState
}

// leaseState is one key's lease on this replica. Its fields are guarded by
// its mu.
type leaseState struct {
	mu sync.Mutex
	// keyID is the key the state is of.
	keyID string
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
	// pending is the call last sent whose reply was not read: it is sent
	// again, unchanged, before any other.
	pending *call
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

// leaseFlight is a call of leaseScript in progress, at most one per key;
// done closes when its outcome is in the state.
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
	// Usage, when set, is told of each key whose counter a call changed,
	// to copy it to the database.
	Usage *UsageSync
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
	l := &Leased{rdb: rdb, timeout: o.Timeout, lifetime: o.Lifetime, log: o.Logger, now: o.Now, replica: replicaID(), usage: o.Usage,
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
		s = &leaseState{keyID: keyID}
		l.keys[keyID] = s
	}
	return s
}

// align drops tokens that may no longer be spent: expired ones (kept to
// be given back), those of changed limits (given back too) and last
// month's (the month's counter is gone).
func (s *leaseState) align(p auth.Principal, month string, now time.Time) {
	if s.month != month {
		s.stock, s.back, s.granted, s.pending = 0, 0, 0, nil
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
		// Refused for the quota, the request took nothing from the rate,
		// whose state stands as the last lease left it.
		s.fill(d, now)
		d.Used, d.RetryAfter = s.counter, d.QuotaResetAfter
		l.metrics.usageRefused(keyID, now)
	}
}

// startLease starts a lease round trip for s, which the caller holds
// locked; the round trip locks s to record its outcome.
func (l *Leased) startLease(s *leaseState, p auth.Principal, month string) *leaseFlight {
	c := l.nextCall(s, LeaseSize(p.RatePerSecond, p.MonthlyQuota))
	f := &leaseFlight{done: make(chan struct{})}
	s.flight = f
	go l.lease(s, f, c)
	return f
}

// nextCall returns the call s sends next, which the caller holds locked:
// the pending one, whose reply was lost, else a new one that gives s.back
// back and asks for want tokens. A call pending for pendingLimit is
// dropped: Redis may or may not have applied it, so its tokens given back
// are taken as given and those it leased as lost; short of the quota,
// never over.
func (l *Leased) nextCall(s *leaseState, want int64) *call {
	now := l.now()
	if c := s.pending; c != nil {
		if c.month == s.month && now.Sub(c.firstSentAt) < pendingLimit {
			return c
		}
		s.pending = nil
	}
	c := &call{seq: l.calls.Add(1), month: s.month, rate: s.rate, quota: s.quota, back: s.back, want: want, firstSentAt: now}
	s.back = 0
	s.pending = c
	return c
}

// run sends c on cmd (the client or a pipeline) for keyID. The caller
// tells l.usage once the reply is in (touched).
func (l *Leased) run(ctx context.Context, cmd redis.Scripter, keyID string, c *call) *redis.Cmd {
	keys := append(limitKeys(keyID, c.month), callKey(keyID, l.replica))
	return leaseScript.Run(ctx, cmd, keys, max(c.rate, 0), max(c.quota, 0), c.back, c.want, shrinkDivisor, c.seq, callRecordTTL.Milliseconds())
}

func (l *Leased) lease(s *leaseState, f *leaseFlight, c *call) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	l.leases.WithLabelValues("lease").Inc()
	res, err := l.run(ctx, l.rdb, s.keyID, c).Slice()
	l.touched(s.keyID, c)
	s.mu.Lock()
	f.err = l.settle(s, c, res, err)
	s.flight = nil
	s.mu.Unlock()
	close(f.done)
}

// settle records the reply to c in s, which the caller holds locked. On
// an error c stays pending, to be sent again.
func (l *Leased) settle(s *leaseState, c *call, res []any, err error) error {
	if err == nil && len(res) != 6 {
		err = errors.New("unexpected reply")
	}
	if err != nil {
		return err
	}
	if s.pending == c {
		s.pending = nil
	}
	outcome, _ := res[0].(int64)
	granted, _ := res[1].(int64)
	rateLeft, _ := res[2].(int64)
	retryAfter, _ := res[3].(string)
	resetAfter, _ := res[4].(string)
	counter, _ := res[5].(int64)
	if c.want == 0 || outcome == 3 {
		return nil
	}
	if s.month != c.month || s.rate != c.rate || s.quota != c.quota {
		// Limits or month changed meanwhile: the next call gives these
		// back if they still can be.
		if s.month == c.month {
			s.back += granted
		}
		return nil
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
		// The rate's state too: the headers of a quota refusal report it.
		s.refusal, s.counter, s.rateLeft = ErrUsageLimited, counter, rateLeft
		s.refusedTo = now.Add(refusalHold)
	}
	return nil
}

// touched tells l.usage that c, whose reply is in or lost, may have
// changed keyID's counter.
func (l *Leased) touched(keyID string, c *call) {
	if c.quota > 0 {
		l.usage.touch(keyID)
	}
}

// replicaID is a random name for a limiter's call records: unique per
// process, so no two replicas share a record.
func replicaID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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

// callKey is the record of replica's last call for keyID (leaseScript),
// in the slot of keyID's other keys.
func callKey(keyID, replica string) string { return "lease:{" + keyID + "}:" + replica }

// Run gives back the unspent tokens of expired leases every half lease
// lifetime, sends again the calls whose replies were lost, and forgets
// keys idle for a minute, until ctx ends; then it gives back every key's
// unspent tokens, so a replica that shuts down leaves nothing reserved.
func (l *Leased) Run(ctx context.Context) {
	tick := time.NewTicker(l.lifetime / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.awaitLeases()
			// A lease sent again brings tokens, which take one more round.
			for range 3 {
				if !l.giveBack(true) {
					break
				}
			}
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
// all is set, and sends again the calls whose replies were lost, in one
// pipeline. Each is a flight of its key, so a request that needs a lease
// meanwhile waits for it: one call per key in flight keeps their numbers
// in order (see leaseScript). It reports whether a key is left with
// tokens to give back or a call unanswered.
func (l *Leased) giveBack(all bool) (left bool) {
	type ret struct {
		s *leaseState
		c *call
		f *leaseFlight
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
		if s.pending != nil && (s.pending.month != month || now.Sub(s.pending.firstSentAt) >= pendingLimit) {
			s.pending = nil // as nextCall drops it
		}
		if s.month == month && (s.back > 0 || s.pending != nil) && s.flight == nil {
			f := &leaseFlight{done: make(chan struct{})}
			s.flight = f
			rets = append(rets, ret{s: s, c: l.nextCall(s, 0), f: f})
		}
		l.forgetIdle(id, s, now)
		s.mu.Unlock()
	}
	l.mu.Unlock()
	if len(rets) == 0 {
		return false
	}
	timeout := l.timeout
	if all {
		timeout = max(timeout, time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmds := make([]*redis.Cmd, len(rets))
	l.leases.WithLabelValues("return").Add(float64(len(rets)))
	_, _ = l.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, r := range rets {
			cmds[i] = l.run(ctx, pipe, r.s.keyID, r.c)
		}
		return nil
	})
	var failed error
	for i, r := range rets {
		res, err := cmds[i].Slice()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// A fresh or flushed Redis: Run on a pipeline sends EVALSHA
			// only, and Run on the client loads the script.
			res, err = l.run(ctx, l.rdb, r.s.keyID, r.c).Slice()
		}
		l.touched(r.s.keyID, r.c)
		l.mu.Lock()
		r.s.mu.Lock()
		if err = l.settle(r.s, r.c, res, err); err != nil {
			failed = err
		}
		left = left || r.s.back > 0 || r.s.pending != nil || (all && r.s.stock > 0)
		r.s.flight = nil
		l.forgetIdle(r.s.keyID, r.s, now)
		r.s.mu.Unlock()
		l.mu.Unlock()
		close(r.f.done)
	}
	if failed != nil {
		// Sent again by the next sweep or lease, and applied once.
		l.warn(fmt.Errorf("give back unspent tokens: %w", failed))
	}
	return left
}

// forgetIdle drops s, the state of id, from the map when it holds nothing
// and its key was idle for a minute. The caller holds l.mu and s.mu.
func (l *Leased) forgetIdle(id string, s *leaseState, now time.Time) {
	if s.stock == 0 && s.back == 0 && s.pending == nil && s.flight == nil && now.Sub(s.lastUsed) > time.Minute {
		s.forgotten = true
		delete(l.keys, id)
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
