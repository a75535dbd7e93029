package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// limitScript applies the GCRA rate limit (the algorithm and key layout of
// go-redis/redis_rate, whose "rate:" prefix it keeps) and the monthly usage
// counter in one atomic step: one round trip per request instead of one
// per limit. Concurrent requests can neither
// overshoot the quota nor be counted twice, and a request refused by either
// limit consumes neither.
//
// The usage counter has no expiry, on purpose: Redis runs with maxmemory
// and the volatile-lru policy (deploy/README.md), which evicts only keys
// with an expiry, so cache entries make room and a quota is never reset by
// eviction. The first count of a month deletes the previous month's counter
// instead, so one counter per key is kept. The rate key (GCRA, seconds long)
// keeps its expiry: evicting it costs at most one extra burst.
//
// KEYS: rate key, usage key, previous month's usage key.
// ARGV: rate per second (0: none), monthly quota (0: none).
// Reply: {outcome (1 allowed, 0 rate refused, 2 quota refused), remaining,
// retry_after seconds, reset_after seconds, used}.
var limitScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
local remaining, reset, new_tat = 0, 0, nil
if rate > 0 then
  local t = redis.call('TIME')
  local now = (t[1] - 1483228800) + (t[2] / 1000000)
  local emission = 1 / rate
  local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  new_tat = tat + emission
  local diff = now - (new_tat - emission * rate)
  remaining = diff / emission
  if remaining < 0 then
    return {0, 0, tostring(-diff), tostring(tat - now), 0}
  end
  reset = new_tat - now
end
local used = 0
if quota > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used >= quota then
    if new_tat then
      -- The rate as it stands: this request takes nothing from it.
      remaining, reset = remaining + 1, reset - 1 / rate
    end
    return {2, remaining, '-1', tostring(reset), used}
  end
  used = redis.call('INCR', KEYS[2])
  if used == 1 then redis.call('DEL', KEYS[3]) end
end
if new_tat and reset > 0 then
  redis.call('SET', KEYS[1], new_tat, 'EX', math.ceil(reset))
end
return {1, remaining, '-1', tostring(reset), used}
`)

// Redis limits requests with GCRA and counts monthly usage under
// "usage:{<keyID>}:<YYYY-MM>" (limitKeys), both in one script call per request.
type Redis struct {
	rdb     redis.UniversalClient
	timeout time.Duration
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics
	lastLog atomic.Int64
	batch   *batcher
	usage   *UsageSync
}

// RedisOptions configure NewRedis.
type RedisOptions struct {
	// Timeout bounds each Redis round trip; past it the request is let
	// through (fail open).
	Timeout  time.Duration
	Logger   *slog.Logger
	Registry prometheus.Registerer
	Now      func() time.Time
	// Usage, when set, is told of each key whose counter a check changed,
	// to copy it to the database.
	Usage *UsageSync
}

// NewRedis returns a limiter on rdb.
func NewRedis(rdb redis.UniversalClient, o RedisOptions) *Redis {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	return &Redis{rdb: rdb, timeout: o.Timeout, log: o.Logger, now: now, metrics: newMetrics(o.Registry, "redis"), usage: o.Usage,
		batch: &batcher{rdb: rdb, timeout: o.Timeout, maxInFlight: 2}}
}

// Allow checks and counts one request of p. When Redis fails or is slow,
// the request is let through with Degraded set: an outage of the limiter
// must not become an outage of the API. The failure is logged (at most
// once per 10 s) and counted in ratelimit_errors_total.
func (l *Redis) Allow(ctx context.Context, p auth.Principal) Decision {
	now := l.now()
	d := Decision{Rate: p.RatePerSecond, Quota: p.MonthlyQuota}
	month, reset, window := monthWindow(now)
	d.QuotaResetAfter, d.QuotaWindow = reset, window
	if p.RatePerSecond <= 0 && p.MonthlyQuota <= 0 {
		return d
	}
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	res, err := l.batch.run(cctx, limitKeys(p.KeyID, month), []any{max(p.RatePerSecond, 0), max(p.MonthlyQuota, 0)})
	cancel()
	if p.MonthlyQuota > 0 {
		// Even on an error: the check may have counted.
		l.usage.touch(p.KeyID)
	}
	if err == nil && len(res) != 5 {
		err = errors.New("unexpected reply")
	}
	if err != nil {
		return l.degraded(d, fmt.Errorf("limits: %w", err))
	}
	outcome, _ := res[0].(int64)
	remaining, _ := res[1].(int64)
	retryAfter, _ := res[2].(string)
	resetAfter, _ := res[3].(string)
	used, _ := res[4].(int64)
	if p.RatePerSecond > 0 {
		d.Remaining, d.ResetAfter = int(remaining), seconds(resetAfter)
	}
	d.Used = used
	switch outcome {
	case 0:
		d.Err, d.RetryAfter, d.Used = ErrRateLimited, seconds(retryAfter), 0
		l.metrics.refused.WithLabelValues("rate").Inc()
	case 2:
		d.Err, d.RetryAfter = ErrUsageLimited, reset
		l.metrics.usageRefused(p.KeyID, now)
	}
	return d
}

// seconds reads a script's decimal seconds; as redis_rate does, a negative
// value means none.
func seconds(s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

func (l *Redis) degraded(d Decision, err error) Decision {
	l.metrics.errors.Inc()
	now := l.now().Unix()
	if last := l.lastLog.Load(); now-last >= 10 && l.lastLog.CompareAndSwap(last, now) && l.log != nil {
		l.log.Warn("rate limiter unavailable, letting requests through", "err", err)
	}
	d.Degraded = true
	d.Remaining = d.Rate
	return d
}

type metrics struct {
	refused *prometheus.CounterVec
	errors  prometheus.Counter
	quota   *quotaRefusals
}

// usageRefused counts a request of keyID refused for its monthly quota.
func (m *metrics) usageRefused(keyID string, now time.Time) {
	m.refused.WithLabelValues("usage").Inc()
	m.quota.refused(keyID, now)
}

func newMetrics(reg prometheus.Registerer, backend string) *metrics {
	m := &metrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketdata_ratelimit_refused_total", Help: "Requests refused by the rate limit or the monthly quota.",
			ConstLabels: prometheus.Labels{"backend": backend},
		}, []string{"limit"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "marketdata_ratelimit_errors_total", Help: "Limit checks that failed and let the request through (fail open).",
			ConstLabels: prometheus.Labels{"backend": backend},
		}),
		quota: newQuotaRefusals(),
	}
	m.refused.WithLabelValues("rate")
	m.refused.WithLabelValues("usage")
	if reg != nil {
		reg.MustRegister(m.refused, m.errors, m.quota.gauge)
	}
	return m
}
