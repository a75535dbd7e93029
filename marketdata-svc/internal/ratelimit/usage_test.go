package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestQuotaSurvivesRedisLoss: Redis loses every counter (FLUSHDB, as a
// restart without persistence does) while a key has used most of its
// quota. With the usage copied to PostgreSQL, the key gets what was left
// of its quota and no more than the package comment's bound more: the
// requests served since the last copy before the loss, those served after
// it before the next copy, and the tokens the replica held. A replica
// started after a loss restores the counters before it serves.
func TestQuotaSurvivesRedisLoss(t *testing.T) {
	for _, mode := range []struct {
		name string
		open func(t *testing.T, rdb redis.UniversalClient, u *UsageSync) limiter
	}{
		{"lease", func(t *testing.T, rdb redis.UniversalClient, u *UsageSync) limiter {
			l := NewLeased(rdb, LeasedOptions{Timeout: time.Second, Registry: prometheus.NewRegistry(), Usage: u})
			runLeased(t, l)
			return l
		}},
		{"exact", func(t *testing.T, rdb redis.UniversalClient, u *UsageSync) limiter {
			return NewRedis(rdb, RedisOptions{Timeout: time.Second, Registry: prometheus.NewRegistry(), Usage: u})
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			const quota = 300
			const copied, uncopied, afterLoss = 200, 20, 10
			ctx := context.Background()
			store := testenv.Store(t)
			rdb := testClient(t, testenv.Redis(t))
			sync := NewUsageSync(rdb, store, UsageSyncOptions{})
			l := mode.open(t, rdb, sync)
			p := auth.Principal{KeyID: "durable", MonthlyQuota: quota}
			served := 0
			serve := func(l limiter, n int) {
				t.Helper()
				for range n {
					if d := l.Allow(ctx, p); d.Degraded {
						t.Fatalf("degraded: %+v", d)
					} else if d.Err == nil {
						served++
					}
				}
			}
			// copySync is one tick of Run.
			copySync := func() {
				t.Helper()
				if err := sync.Copy(ctx); err != nil {
					t.Fatal(err)
				}
			}
			serve(l, copied)
			copySync()
			serve(l, uncopied)
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			serve(l, afterLoss)
			copySync() // finds the counter lost and raises it
			serve(l, quota)
			// Tokens a replica may hold, given back onto the raised
			// counter: 2.5 leases (see the package comment).
			held := int(LeaseSize(0, quota) * 5 / 2)
			bound := quota + uncopied + afterLoss + held
			t.Logf("served %d of a quota of %d across the loss (bound %d; %d without the copy)", served, quota, bound, copied+uncopied+quota)
			if served > bound || served < quota {
				t.Fatalf("served %d of a quota of %d, want at most %d", served, quota, bound)
			}

			// A replica that starts after a loss restores the counters
			// from the copy before its first request.
			copySync()
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sync2 := NewUsageSync(rdb, store, UsageSyncOptions{})
			if err := sync2.Reconcile(ctx); err != nil { // as Run does first
				t.Fatal(err)
			}
			l2 := mode.open(t, rdb, sync2)
			if d := l2.Allow(ctx, p); d.Err != ErrUsageLimited || d.Degraded {
				t.Errorf("first request of a replica started after the loss: %+v, want a quota refusal", d)
			}
		})
	}
}

// TestUsageSyncRun: Run restores the month's counters at start, copies the
// counters its limiter changed every interval, and once more when it ends.
func TestUsageSyncRun(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	rdb := testClient(t, testenv.Redis(t))
	month, _, _ := monthWindow(time.Now())
	if err := store.SaveUsage(ctx, month, map[string]int64{"kept": 40}); err != nil {
		t.Fatal(err)
	}
	sync := NewUsageSync(rdb, store, UsageSyncOptions{Interval: time.Second})
	l := NewRedis(rdb, RedisOptions{Timeout: time.Second, Registry: prometheus.NewRegistry(), Usage: sync})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sync.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the counter restored at start", func() bool {
		n, _ := rdb.Get(ctx, usageKey("kept", month)).Int64()
		return n == 40
	})
	for range 5 {
		l.Allow(ctx, auth.Principal{KeyID: "new", MonthlyQuota: 100})
	}
	durable := func(id string) int64 {
		used, err := store.LoadUsage(ctx, month, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return used[id]
	}
	waitFor("the counter copied within an interval", func() bool { return durable("new") == 5 })
	l.Allow(ctx, auth.Principal{KeyID: "new", MonthlyQuota: 100})
	stop()
	<-done
	if n := durable("new"); n != 6 {
		t.Errorf("copy after Run ended = %d, want 6", n)
	}
}
