package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestRefusalReportsTheOtherLimit: a refusal by one limit takes nothing
// from the other, and what the decision reports of the other (the headers
// read it) is its true state, in every mode. A quota refusal reports the
// rate tokens left, as an allowed request would: one more than a request
// of the same rate right after it finds. A rate refusal claims no month's
// count (the headers leave the month out), and the next request counts
// the month as if the refusal had not been.
func TestRefusalReportsTheOtherLimit(t *testing.T) {
	for _, mode := range []struct {
		name string
		open func(t *testing.T) limiter
	}{
		{"local", func(t *testing.T) limiter { return NewLocal(prometheus.NewRegistry(), nil) }},
		{"exact", func(t *testing.T) limiter {
			l, _ := redisLimiter(t, testenv.Redis(t))
			return l
		}},
		{"lease", func(t *testing.T) limiter {
			l, _ := leasedLimiter(t, testenv.Redis(t), nil)
			runLeased(t, l)
			return l
		}},
	} {
		t.Run(mode.name+"/quota", func(t *testing.T) {
			l := mode.open(t)
			ctx := context.Background()
			// A token every 500 ms: the three requests below, well inside
			// that, see no token come back.
			p := auth.Principal{KeyID: "quota-refused", RatePerSecond: 2, MonthlyQuota: 1}
			if d := l.Allow(ctx, p); d.Err != nil || d.Remaining != 1 || d.Used != 1 {
				t.Fatalf("first request: %+v", d)
			}
			d := l.Allow(ctx, p)
			if d.Err != ErrUsageLimited || d.Used != 1 || d.RetryAfter != d.QuotaResetAfter {
				t.Fatalf("second request: %+v, want a quota refusal", d)
			}
			probe := l.Allow(ctx, auth.Principal{KeyID: p.KeyID, RatePerSecond: p.RatePerSecond})
			if probe.Err != nil || d.Remaining != probe.Remaining+1 || d.ResetAfter <= 0 || d.ResetAfter > time.Second {
				t.Errorf("quota refusal reports %d rate tokens left (reset in %v); the next request found %d after it took one: %+v",
					d.Remaining, d.ResetAfter, probe.Remaining, probe)
			}
		})
		t.Run(mode.name+"/rate", func(t *testing.T) {
			l := mode.open(t)
			ctx := context.Background()
			p := auth.Principal{KeyID: "rate-refused", RatePerSecond: 2, MonthlyQuota: 100}
			for i := range 2 {
				if d := l.Allow(ctx, p); d.Err != nil || d.Used != int64(i+1) {
					t.Fatalf("request %d: %+v", i+1, d)
				}
			}
			d := l.Allow(ctx, p)
			if d.Err != ErrRateLimited || d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > time.Second || d.Used != 0 {
				t.Fatalf("third request: %+v, want a rate refusal with no month's count", d)
			}
			time.Sleep(d.RetryAfter + 10*time.Millisecond)
			if d := l.Allow(ctx, p); d.Err != nil || d.Used != 3 {
				t.Errorf("request after the rate refusal: %+v, want the month's third", d)
			}
		})
	}
}
