package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Local is the in-process equivalent of Redis for a single instance
// without Redis: the same GCRA and monthly counter, kept in memory (so
// usage restarts at zero when the process restarts).
type Local struct {
	mu      sync.Mutex
	now     func() time.Time
	tat     map[string]time.Time // GCRA theoretical arrival time per key
	usage   map[string]int64     // "keyID:YYYY-MM" -> count
	metrics *metrics
	months  monthCache
}

// NewLocal returns an in-process limiter. now may be nil.
func NewLocal(reg prometheus.Registerer, now func() time.Time) *Local {
	if now == nil {
		now = time.Now
	}
	return &Local{now: now, tat: map[string]time.Time{}, usage: map[string]int64{}, metrics: newMetrics(reg, "local")}
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
		l.prune(now)
		emission := time.Second / time.Duration(p.RatePerSecond)
		burst := emission * time.Duration(p.RatePerSecond)
		tat := l.tat[p.KeyID]
		if tat.Before(now) {
			tat = now
		}
		newTAT := tat.Add(emission)
		if allowAt := newTAT.Add(-burst); now.Before(allowAt) {
			d.Err, d.RetryAfter = ErrRateLimited, allowAt.Sub(now)
			d.ResetAfter = tat.Sub(now)
			l.metrics.refused.WithLabelValues("rate").Inc()
			return d
		}
		d.Remaining = int((burst - newTAT.Sub(now)) / emission)
		d.ResetAfter = newTAT.Sub(now)
		l.tat[p.KeyID] = newTAT
	}
	if p.MonthlyQuota > 0 {
		k := p.KeyID + ":" + month
		if l.usage[k] >= p.MonthlyQuota {
			d.Used, d.Err, d.RetryAfter = l.usage[k], ErrUsageLimited, reset
			l.metrics.usageRefused(p.KeyID, now)
			return d
		}
		l.usage[k]++
		d.Used = l.usage[k]
	}
	return d
}

// prune drops keys whose bucket is full again, so the map holds only keys
// active in the last second or so; old months' counters go with a month
// change.
func (l *Local) prune(now time.Time) {
	if len(l.tat) < 10_000 {
		return
	}
	for k, tat := range l.tat {
		if tat.Before(now) {
			delete(l.tat, k)
		}
	}
	month, _, _ := monthWindow(now)
	for k := range l.usage {
		if len(k) < 7 || k[len(k)-7:] != month {
			delete(l.usage, k)
		}
	}
}
