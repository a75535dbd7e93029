package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestLostRepliesNeverOverQuota: three replicas share a key's quota, one of
// them behind a proxy that delays Redis's replies past the limiter's
// timeout, so every script it sends runs in Redis while its reply is lost.
// Whatever that replica retries, the requests the limiters admitted from
// Redis's tokens (not degraded) never exceed the quota, and once the
// replies flow again and every replica has stopped, the month's counter
// holds exactly those requests: no write was applied twice, no lease was
// lost. The slow replica's degraded requests are the fail-open policy of
// the package comment, reported but not counted.
func TestLostRepliesNeverOverQuota(t *testing.T) {
	for _, mode := range []struct {
		name string
		// settles: once stopped, the counter holds exactly the requests
		// served from it. The exact mode counts a request whose reply was
		// lost and lets it through degraded, so its counter may hold more.
		settles bool
		open    func(url string, now func() time.Time) (limiter, func())
	}{
		{"lease", true, func(url string, now func() time.Time) (limiter, func()) {
			l := NewLeased(testClient(t, url), LeasedOptions{Timeout: 50 * time.Millisecond, Registry: prometheus.NewRegistry(), Now: now})
			return l, runLeased(t, l)
		}},
		{"exact", false, func(url string, now func() time.Time) (limiter, func()) {
			return NewRedis(testClient(t, url), RedisOptions{Timeout: 50 * time.Millisecond, Registry: prometheus.NewRegistry(), Now: now}), func() {}
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			const quota = 3200 // leases of 32
			ctx := context.Background()
			proxy := testenv.RedisProxy(t)
			// The slow replica's clock: the test moves it past a lease's
			// lifetime rather than waiting, which the sweep would use to
			// give the tokens back first.
			var ahead atomic.Int64
			slowNow := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			var replicas [3]limiter
			var stops [3]func()
			replicas[0], stops[0] = mode.open(proxy.URL, slowNow)
			for i := 1; i < len(replicas); i++ {
				replicas[i], stops[i] = mode.open(proxy.Direct, nil)
			}
			p := auth.Principal{KeyID: "lost-replies", MonthlyQuota: quota}
			var served, degraded [3]atomic.Int64
			allow := func(i int) {
				switch d := replicas[i].Allow(ctx, p); {
				case d.Degraded:
					degraded[i].Add(1)
				case d.Err == nil:
					served[i].Add(1)
				}
			}
			// The slow replica holds tokens, which expire into a give-back
			// that its next lease carries, while its replies are late.
			allow(0)
			if served[0].Load() != 1 {
				t.Fatal("the first request was not served from Redis")
			}
			proxy.SetScriptReplyLatency(100 * time.Millisecond)
			ahead.Store(int64(DefaultLeaseLifetime))
			deadline := time.Now().Add(4 * time.Second)
			var wg sync.WaitGroup
			for w := range 12 {
				i := 0 // half the callers on the slow replica
				if w >= 6 {
					i = 1 + w%2
				}
				wg.Go(func() {
					for time.Now().Before(deadline) {
						allow(i)
						if i > 0 {
							time.Sleep(time.Millisecond)
						}
					}
				})
			}
			wg.Wait()
			proxy.SetScriptReplyLatency(0)
			total := served[0].Load() + served[1].Load() + served[2].Load()
			t.Logf("served from Redis's tokens: slow %d, healthy %d and %d (total %d of %d); degraded on the slow one %d",
				served[0].Load(), served[1].Load(), served[2].Load(), total, quota, degraded[0].Load())
			if total > quota {
				t.Errorf("served %d of a quota of %d", total, quota)
			}
			// The replies flow again: stopping gives every unspent token
			// back, including those of leases whose replies were lost.
			for _, stop := range stops {
				stop()
			}
			month, _, _ := monthWindow(time.Now())
			rdb := testClient(t, proxy.Direct)
			n, err := rdb.Get(ctx, usageKey(p.KeyID, month)).Int64()
			if err != nil || n < total || n > quota || (mode.settles && n != total) {
				t.Errorf("counter = %d (%v) after every replica stopped, for %d requests served", n, err, total)
			}
		})
	}
}

// TestLeaseCallAppliedOnce sends one give-back-and-lease call three times,
// as a replica does whose replies are lost: Redis applies it once and
// answers the copies with the first reply; an older call arriving late is
// applied never.
func TestLeaseCallAppliedOnce(t *testing.T) {
	ctx := context.Background()
	l, rdb := leasedLimiter(t, testenv.Redis(t), nil)
	month, _, _ := monthWindow(time.Now())
	key := usageKey("once", month)
	if err := rdb.Set(ctx, key, 100, 0).Err(); err != nil {
		t.Fatal(err)
	}
	c := &call{seq: 7, month: month, quota: 1000, back: 30, want: 10}
	var first []any
	for i := range 3 {
		res, err := l.run(ctx, l.rdb, "once", c).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = res
		} else if fmt.Sprint(res) != fmt.Sprint(first) {
			t.Errorf("copy %d answered %v, the call %v", i, res, first)
		}
	}
	// 100 - 30 given back + 10 leased, once.
	if n, _ := rdb.Get(ctx, key).Int64(); n != 80 || first[1] != int64(10) || first[5] != int64(80) {
		t.Errorf("counter %d after the call and its copies, reply %v; want 80", n, first)
	}
	old := &call{seq: 6, month: month, quota: 1000, back: 50}
	if res, err := l.run(ctx, l.rdb, "once", old).Slice(); err != nil || res[0] != int64(3) {
		t.Errorf("an older call: %v, %v; want outcome 3", res, err)
	}
	if n, _ := rdb.Get(ctx, key).Int64(); n != 80 {
		t.Errorf("counter %d after an older call, want 80", n)
	}
}
