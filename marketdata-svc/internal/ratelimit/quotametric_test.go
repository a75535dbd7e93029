package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestQuotaRefusalTimestamp: a key refused for its quota gets a series
// holding the time of its last refusal; a rate refusal and a key within its
// quota get none.
func TestQuotaRefusalTimestamp(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	l := NewLocal(prometheus.NewRegistry(), func() time.Time { return now })
	spent := auth.Principal{KeyID: "key-spent", MonthlyQuota: 1}
	busy := auth.Principal{KeyID: "key-busy", RatePerSecond: 1}
	ctx := context.Background()
	l.Allow(ctx, spent)
	l.Allow(ctx, busy)
	if d := l.Allow(ctx, busy); d.Err != ErrRateLimited {
		t.Fatalf("second request at rate 1/s: %+v", d)
	}
	if n := testutil.CollectAndCount(l.metrics.quota.gauge); n != 0 {
		t.Fatalf("%d quota series before any quota refusal, want 0", n)
	}
	now = now.Add(time.Minute)
	if d := l.Allow(ctx, spent); d.Err != ErrUsageLimited {
		t.Fatalf("request past the quota: %+v", d)
	}
	if n := testutil.CollectAndCount(l.metrics.quota.gauge); n != 1 {
		t.Fatalf("%d quota series, want 1", n)
	}
	if got, want := testutil.ToFloat64(l.metrics.quota.gauge.WithLabelValues("key-spent")), float64(now.Unix()); got != want {
		t.Errorf("last refusal of key-spent = %v, want %v", got, want)
	}
}

// TestQuotaRefusalSeriesBounded: past MaxQuotaKeys keys, stale series make
// room, and when none is stale the refusal is recorded under OtherKey, so
// the series never exceed MaxQuotaKeys plus one.
func TestQuotaRefusalSeriesBounded(t *testing.T) {
	q := newQuotaRefusals()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range MaxQuotaKeys {
		q.refused(fmt.Sprintf("old-%d", i), start)
	}
	later := start.Add(time.Hour)
	q.refused("new-1", later)
	if got := testutil.ToFloat64(q.gauge.WithLabelValues(OtherKey)); got != float64(later.Unix()) {
		t.Errorf("other = %v, want the refusal of new-1 at %v", got, later.Unix())
	}
	if n := testutil.CollectAndCount(q.gauge); n != MaxQuotaKeys+1 {
		t.Errorf("%d series with no stale one to drop, want %d", n, MaxQuotaKeys+1)
	}

	// A day later the old series are stale: the new key gets its own.
	q.refused("new-2", start.Add(quotaSeriesIdle+time.Minute))
	if n := testutil.CollectAndCount(q.gauge); n != 2 {
		t.Errorf("%d series after the stale ones were dropped, want 2 (other and new-2)", n)
	}
	if got := testutil.ToFloat64(q.gauge.WithLabelValues("new-2")); got == 0 {
		t.Error("new-2 has no series of its own")
	}
}
