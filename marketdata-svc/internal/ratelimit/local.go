package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// Local is the in-process equivalent of Redis for a single instance
// without Redis: the same GCRA (pkg/keyrate's, which notes-svc applies
// too) and monthly counter, kept in memory (so usage restarts at zero
// when the process restarts).
type Local struct {
	mu      sync.Mutex
	now     func() time.Time
	rates   keyrate.Table    // GCRA state per key
	usage   map[string]int64 // "keyID:YYYY-MM" -> count
	metrics *metrics
	months  monthCache
}

// NewLocal returns an in-process limiter. now may be nil.
func NewLocal(reg prometheus.Registerer, now func() time.Time) *Local {
	if now == nil {
		now = time.Now
	}
	return &Local{now: now, usage: map[string]int64{}, metrics: newMetrics(reg, "local")}
}

// Allow checks and counts one request of p.
func (l *Local) Allow(_ context.Context, p auth.Principal) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	d := Decision{Rate: p.RatePerSecond, Quota: p.MonthlyQuota}
	month, reset, window := l.months.window(now)
	d.QuotaResetAfter, d.QuotaWindow = reset, window
	if p.RatePerSecond > 0 {
		if l.rates.Prune(now) {
			l.pruneUsage(now)
		}
		// Peeked first: a request the quota then refuses takes no token.
		r := l.rates.Peek(now, p.KeyID, p.RatePerSecond)
		d.Remaining, d.ResetAfter = r.Remaining, r.ResetAfter
		if !r.Allowed {
			d.Err, d.RetryAfter = ErrRateLimited, r.RetryAfter
			l.metrics.refused.WithLabelValues("rate").Inc()
			return d
		}
	}
	k := p.KeyID + ":" + month
	if p.MonthlyQuota > 0 && l.usage[k] >= p.MonthlyQuota {
		d.Used, d.Err, d.RetryAfter = l.usage[k], ErrUsageLimited, reset
		l.metrics.usageRefused(p.KeyID, now)
		return d
	}
	if p.RatePerSecond > 0 {
		r := l.rates.Allow(now, p.KeyID, p.RatePerSecond)
		d.Remaining, d.ResetAfter = r.Remaining, r.ResetAfter
	}
	if p.MonthlyQuota > 0 {
		l.usage[k]++
		d.Used = l.usage[k]
	}
	return d
}

// pruneUsage drops old months' counters, when the rates are pruned (the
// table of rates holds only keys active in the last second or so).
func (l *Local) pruneUsage(now time.Time) {
	month, _, _ := monthWindow(now)
	for k := range l.usage {
		if len(k) < 7 || k[len(k)-7:] != month {
			delete(l.usage, k)
		}
	}
}
