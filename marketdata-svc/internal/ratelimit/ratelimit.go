// Package ratelimit enforces each API key's request rate (GCRA) and monthly
// usage quota, in Redis when the service has one and in process otherwise.
//
// The rate limit allows RatePerSecond requests per second with a burst of
// the same size (one second's worth), so a client that paces itself never
// sees a 429 and one that bursts gets at most a second's worth at once.
// The monthly usage counter counts each request the rate limit admits,
// once, in the calendar month (UTC) it arrives; a request refused by either
// limit is not counted.
//
// Three limiters share that contract. Local keeps both limits in process
// memory, for a service without Redis. Redis (MARKETDATA_RATELIMIT_MODE=
// exact) checks every request with one script, exact across replicas at
// one round trip per request. Leased (the default, "lease") makes no round
// trip on most requests:
//
// # Leases
//
// A token admits one request under both limits. A replica leases tokens
// per key from Redis (leaseScript, one atomic step) and spends them in
// memory. A lease of n advances the key's GCRA TAT by n/rate (redis_rate's
// AllowN) and adds n to the month's counter usage:{<keyID>}:<YYYY-MM>, which
// therefore counts requests served plus tokens replicas hold unspent.
// Redis grants n = min(size, what GCRA admits now, quota - counter,
// max(1, (quota - counter)/16)): the sum of outstanding leases never
// exceeds what is left, so no number of replicas serves more than the
// quota. The size asked for is
//
//	size = clamp(min(rate/10, quota/100), 1, 1000)   (an absent limit drops out)
//
// so a lease holds at most a tenth of a second's rate and 1% of the
// quota. A key of rate under 20/s or quota under 200 leases one token per
// request, synchronously: exact, as in the exact mode. Whatever the quota, its last
// 16 tokens are leased one at a time.
//
// When a key's stock falls to half its last lease, one lease is taken in
// the background, so requests rarely wait; a request that finds no token
// waits for its key's lease in flight (one per key per replica), and one
// that Redis refuses is answered from memory for up to 100 ms (refusalHold)
// before Redis is asked again. Leased tokens are spendable for 500 ms
// (DefaultLeaseLifetime); then they go back (the counter down, the TAT
// back by n/rate but never before now), carried by the key's next lease or
// by Run's sweep every 250 ms, and all of them when Run ends at shutdown.
//
// # Lost replies
//
// Redis may apply a script whose reply never arrives: the call timed out
// (MARKETDATA_CACHE_TIMEOUT) or its connection was cut after it ran. A
// give-back or lease sent again then must not be applied again: a give-back
// applied twice hands out tokens that were served, and a replica whose
// replies are late would hand them out on every try. So a replica numbers
// its calls per key, keeps at most one in flight per key, and sends a call
// whose reply it lost again unchanged until it reads a reply; Redis keeps
// each replica's last call per key (lease:{<keyID>}:<replica>, 2 minutes)
// and answers a copy with the first reply, applying it once
// (TestLostRepliesNeverOverQuota, TestLeaseCallAppliedOnce). A call
// unanswered for 30 s is dropped, well before its record expires, its
// give-back taken as done and its lease as lost: short of the quota, never
// over. The exact mode's check is never sent again: a request whose reply
// was lost is let through degraded and stays counted once.
//
// What this costs, exactly:
//   - Quota shortfall. A replica refuses a request for the quota when Redis
//     has none left while other replicas may still hold some: at most
//     1.5·size each (half a lease plus a new one), so (replicas-1)·1.5·size
//     in all (e.g. 2 × 15 = 30 of a quota of 1000 with three replicas, 0
//     for sizes of 1). Those tokens are spent there or given back within a
//     lease lifetime plus one sweep (750 ms) of that replica's last request
//     for the key; the refusal is held 100 ms more. So near the end of its
//     month a key can be refused while up to that many requests remain, for
//     under a second, and then gets exactly its quota (TestThreeReplicas).
//   - A replica that crashes, or whose call stays unanswered for 30 s,
//     leaves its unspent tokens counted as used until the month ends: at
//     most 1.5·size (≤ 1500, ≤ 1.5% of the quota) per key and crash. A
//     reply lost once costs nothing: the call is sent again and its first
//     reply read then. Until then what the call gave back and leased
//     counts as held by that replica (at most 2.5·size: 1.5 expired,
//     one leased), adding to the shortfall above while its replies are
//     late. Counting them as used is chosen over expiring them back:
//     Redis cannot know how many of them were served, and giving them
//     back could let a key exceed its quota, the one promise that must
//     hold. The rate side leaks nothing: the TAT catches up with the clock
//     within a second.
//   - Rate. Tokens are spent after they are leased, so in any window a key
//     can be admitted up to the tokens its replicas held at the start of it
//     beyond what GCRA allows: at most 1.5·size per replica, 15% of a
//     second's worth, none for rates under 20/s.
//   - Headers are this replica's view as of its last lease: Remaining is
//     the rate tokens Redis had left then plus the tokens held here (at most
//     the rate), Used the month's counter then less the tokens held here
//     (tokens held by other replicas count as used). Both are off by at most
//     what other replicas hold and what was spent since.
//   - Redis down: a request that needs a lease is let through (Degraded,
//     counted in marketdata_ratelimit_errors_total, logged at most every
//     10 s), as in the exact mode; tokens held are still spent.
//
// # Durable usage
//
// Redis may lose the counters: a restart without persistence (as
// deploy/compose runs it), a failover to an empty replica. So UsageSync
// copies into PostgreSQL (marketdatadb's key_usage), every
// MARKETDATA_USAGE_SYNC_INTERVAL (5 s by default, 1 s to 5 min), the
// counters that its replica's scripts changed, raising a copy and never
// lowering it. Beside each counter Redis keeps a mark
// (usage:{<keyID>}:<YYYY-MM>:durable), which it loses with the counter: a
// copy that finds a counter without its mark raises it to max(counter,
// copy), and then every counter of the month likewise (reconcileScript,
// set rather than added, so replicas doing it at once agree); a replica
// does that for every counter at start. A counter with its mark is never
// raised, so the tokens leased and given back since a copy are not
// counted twice. After a loss a key can be served beyond its quota by at
// most (TestQuotaSurvivesRedisLoss):
//   - what its replicas served since the last copy before the loss: one
//     interval of its traffic;
//   - what they served after the loss until the next copy found it: one
//     interval more, and nothing for a key first used after that copy;
//   - in lease mode, what replicas held then and give back onto the
//     restored counter, and a call sent again whose record went too: 2.5
//     leases per replica.
//
// For example, a key of 20 requests a second (leases of 2) served at that
// pace by three replicas, with the default interval: 100 + 100 + 15 = 215
// requests. While PostgreSQL is down the copies wait and are retried, and
// the first bound grows by the outage. A copy also holds the tokens leased and unspent at
// that moment (the counter counts them), so a restored key can fall short
// of its quota by those: short, never over. The in-process limiter (no
// Redis) keeps no copy: its counts restart at zero with the process.
//
// marketdata_ratelimit_leases_total{kind="lease"|"return"} counts the
// round trips. BenchmarkAllow (real Redis, 2 shared cores, a key of
// 100000/s and 2e9 a month, 16 concurrent callers): exact 69-140 µs/op and
// ~2,000 network round trips per 10,000 requests (pipelines of about five
// scripts, one script per request); leased 7.5-8.8 µs/op and 116-199 round
// trips per 10,000 requests, 1 allocation per request.
//
// Both modes use the same keys, so replicas in different modes share a
// key's limits (an exact replica sees leased tokens as used).
package ratelimit

import (
	"errors"
	"sync/atomic"
	"time"
)

// Decision is the outcome of one request against a key's limits, with what
// the RateLimit and X-RateLimit-* headers report.
type Decision struct {
	// Err is nil when the request may proceed, else ErrRateLimited or
	// ErrUsageLimited.
	Err error
	// Rate is the key's requests per second; 0 when it has no rate limit.
	Rate int
	// Remaining requests that could be made at once right now. A request
	// refused for the quota takes nothing from the rate, so its Remaining
	// and ResetAfter are the rate's as they stand; one refused for the
	// rate has 0.
	Remaining int
	// ResetAfter is when the rate limiter returns to a full burst.
	ResetAfter time.Duration
	// RetryAfter is when a refused request may be retried.
	RetryAfter time.Duration
	// Quota is the key's monthly quota; 0 when it has none.
	Quota int64
	// Used is how many requests the month has counted, this one included.
	// A request refused for the rate never reaches the counter: Used is 0
	// then, and the headers leave the month out.
	Used int64
	// QuotaResetAfter is the time to the start of the next month (UTC).
	QuotaResetAfter time.Duration
	// QuotaWindow is the length of the current month.
	QuotaWindow time.Duration
	// Degraded reports that the limits could not be checked (Redis down)
	// and the request was let through: the service fails open.
	Degraded bool
}

// Refusals. The HTTP layer maps them to 429 rate_limit_reached and
// usage_limit_reached.
var (
	ErrRateLimited  = errors.New("rate limit reached")
	ErrUsageLimited = errors.New("monthly usage limit reached")
)

// monthWindow returns the month key of now (UTC), the time to the next
// month and the month's length.
func monthWindow(now time.Time) (month string, resetAfter, window time.Duration) {
	now = now.UTC()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	next := start.AddDate(0, 1, 0)
	return start.Format("2006-01"), next.Sub(now), next.Sub(start)
}

// monthCache keeps the current month's bounds and key, so that the
// limiters' hot paths do not format the month and compute its bounds on
// every request. The zero value is ready to use.
type monthCache struct{ span atomic.Pointer[monthSpan] }

type monthSpan struct {
	start, next time.Time
	month       string
}

// window is monthWindow(now), from the kept month when now falls in it.
func (c *monthCache) window(now time.Time) (month string, resetAfter, window time.Duration) {
	if s := c.span.Load(); s != nil && !now.Before(s.start) && now.Before(s.next) {
		return s.month, s.next.Sub(now), s.next.Sub(s.start)
	}
	month, resetAfter, window = monthWindow(now)
	u := now.UTC()
	start := time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	c.span.Store(&monthSpan{start: start, next: start.AddDate(0, 1, 0), month: month})
	return month, resetAfter, window
}
