package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// usageScript counts a request against the month unless the quota is
// already used up, in one atomic step: concurrent requests can neither
// overshoot the quota nor be counted twice.
var usageScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, n}
`)

// Redis limits requests with GCRA (go-redis/redis_rate) and counts monthly
// usage under "usage:{keyID}:{YYYY-MM}".
type Redis struct {
	rdb     redis.UniversalClient
	limiter *redis_rate.Limiter
	timeout time.Duration
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics
	lastLog atomic.Int64
}

// RedisOptions configure NewRedis.
type RedisOptions struct {
	// Timeout bounds each Redis round trip; past it the request is let
	// through (fail open).
	Timeout  time.Duration
	Logger   *slog.Logger
	Registry prometheus.Registerer
	Now      func() time.Time
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
	return &Redis{rdb: rdb, limiter: redis_rate.NewLimiter(rdb), timeout: o.Timeout, log: o.Logger, now: now, metrics: newMetrics(o.Registry, "redis")}
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
	if p.RatePerSecond > 0 {
		cctx, cancel := context.WithTimeout(ctx, l.timeout)
		res, err := l.limiter.Allow(cctx, "rate:"+p.KeyID, redis_rate.PerSecond(p.RatePerSecond))
		cancel()
		if err != nil {
			return l.degraded(d, fmt.Errorf("rate limit: %w", err))
		}
		d.Remaining, d.ResetAfter = res.Remaining, res.ResetAfter
		if res.Allowed == 0 {
			d.Err, d.RetryAfter = ErrRateLimited, res.RetryAfter
			l.metrics.refused.WithLabelValues("rate").Inc()
			return d
		}
	}
	if p.MonthlyQuota > 0 {
		cctx, cancel := context.WithTimeout(ctx, l.timeout)
		// The counter outlives its month by a week so a late request near
		// midnight still finds it, then expires by itself.
		ttl := int64((reset + 7*24*time.Hour).Seconds())
		vals, err := usageScript.Run(cctx, l.rdb, []string{"usage:" + p.KeyID + ":" + month}, p.MonthlyQuota, ttl).Int64Slice()
		cancel()
		if err != nil {
			return l.degraded(d, fmt.Errorf("usage counter: %w", err))
		}
		d.Used = vals[1]
		if vals[0] == 0 {
			d.Err, d.RetryAfter = ErrUsageLimited, reset
			l.metrics.refused.WithLabelValues("usage").Inc()
			return d
		}
	}
	return d
}

// Usage returns the requests counted for keyID in the month of now.
func (l *Redis) Usage(ctx context.Context, keyID string, now time.Time) (int64, error) {
	month, _, _ := monthWindow(now)
	n, err := l.rdb.Get(ctx, "usage:"+keyID+":"+month).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	return n, err
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
	}
	m.refused.WithLabelValues("rate")
	m.refused.WithLabelValues("usage")
	if reg != nil {
		reg.MustRegister(m.refused, m.errors)
	}
	return m
}
