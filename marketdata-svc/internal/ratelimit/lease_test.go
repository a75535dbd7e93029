package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

func leasedLimiter(t testing.TB, url string, now func() time.Time) (*Leased, *redis.Client) {
	t.Helper()
	rdb := testClient(t, url)
	return NewLeased(rdb, LeasedOptions{Timeout: time.Second, Registry: prometheus.NewRegistry(), Now: now}), rdb
}

// testClock is a clock that a test moves while the limiter's goroutines
// read it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// runLeased keeps l's Run going until the returned stop, which waits for
// its final give-back.
func runLeased(t testing.TB, l *Leased) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// Limits of a lease size of 1 (rate under 20/s, quota under 200) are
// checked in Redis on every request, exactly as the exact mode does.
func TestLeasedSmallLimitsExact(t *testing.T) {
	if n := LeaseSize(3, 5); n != 1 {
		t.Fatalf("LeaseSize(3, 5) = %d, want 1", n)
	}
	forEachRedis(t, func(t *testing.T, client func() redis.UniversalClient) {
		rdb := client()
		checkCountedInRedis(t, NewLeased(rdb, LeasedOptions{Timeout: time.Second, Registry: prometheus.NewRegistry()}), rdb)
	})
}

func TestLeaseSize(t *testing.T) {
	for _, c := range []struct {
		rate  int
		quota int64
		want  int64
	}{
		{0, 0, 1000}, {5, 0, 1}, {10, 0, 1}, {250, 0, 25}, {100_000, 0, 1000}, {5_000, 0, 500},
		{0, 99, 1}, {0, 1000, 10}, {0, 2_000_000_000, 1000}, {1000, 500, 5}, {0, 20_000, 200},
	} {
		if got := LeaseSize(c.rate, c.quota); got != c.want {
			t.Errorf("LeaseSize(%d, %d) = %d, want %d", c.rate, c.quota, got, c.want)
		}
	}
}

// Three replicas share one key's quota: together they never admit more
// than it, the last tokens are leased one at a time, and once every
// replica has given its unspent tokens back the key gets all of it.
func TestLeasedQuotaAcrossReplicas(t *testing.T) {
	forEachRedis(t, checkQuotaAcrossReplicas)
}

func checkQuotaAcrossReplicas(t *testing.T, client func() redis.UniversalClient) {
	const quota = 1000 // leases of 10
	p := auth.Principal{KeyID: "shared", MonthlyQuota: quota}
	var replicas [3]*Leased
	var rdb redis.UniversalClient
	for i := range replicas {
		rdb = client()
		replicas[i] = NewLeased(rdb, LeasedOptions{Timeout: time.Second, Registry: prometheus.NewRegistry()})
		runLeased(t, replicas[i])
	}
	var allowed atomic.Int64
	hammer := func(requests int) {
		var wg sync.WaitGroup
		for w := range 12 {
			l := replicas[w%3]
			wg.Go(func() {
				for range requests / 12 {
					switch d := l.Allow(context.Background(), p); d.Err {
					case nil:
						if d.Degraded {
							t.Errorf("degraded: %+v", d)
						}
						allowed.Add(1)
					case ErrUsageLimited:
					default:
						t.Errorf("unexpected %v", d.Err)
					}
				}
			})
		}
		wg.Wait()
	}
	hammer(1500)
	if got := allowed.Load(); got > quota || got < quota-documentedShortfall(3, p) {
		t.Fatalf("first wave admitted %d of a quota of %d (shortfall bound %d)", got, quota, documentedShortfall(3, p))
	}
	// The tokens other replicas held come back within a lease lifetime
	// and a sweep; the key then gets exactly its quota.
	deadline := time.Now().Add(10 * time.Second)
	for allowed.Load() < quota && time.Now().Before(deadline) {
		hammer(24)
		time.Sleep(50 * time.Millisecond)
	}
	if got := allowed.Load(); got != quota {
		t.Fatalf("admitted %d in all, want exactly %d", got, quota)
	}
	hammer(120)
	if got := allowed.Load(); got != quota {
		t.Fatalf("admitted %d after the quota was used, want %d", got, quota)
	}
	month, _, _ := monthWindow(time.Now())
	if n, _ := rdb.Get(context.Background(), usageKey("shared", month)).Int64(); n != quota {
		t.Errorf("counter = %d, want %d", n, quota)
	}
}

// documentedShortfall is the package comment's bound on what a key can be
// refused while other replicas hold it unspent: 1.5 leases per other
// replica.
func documentedShortfall(replicas int64, p auth.Principal) int64 {
	return (replicas - 1) * (LeaseSize(p.RatePerSecond, p.MonthlyQuota) * 3 / 2)
}

// Unspent tokens go back to Redis: to the month's counter and to the
// GCRA's TAT, when a replica stops and when a lease expires.
func TestLeasedGivesBack(t *testing.T) {
	ctx := context.Background()
	url := testenv.Redis(t)
	l, rdb := leasedLimiter(t, url, nil)
	stop := runLeased(t, l)
	p := auth.Principal{KeyID: "giver", RatePerSecond: 100, MonthlyQuota: 1000} // leases of 10
	if d := l.Allow(ctx, p); d.Err != nil || d.Used != 1 || d.Remaining != 99 {
		t.Fatalf("first request: %+v", d)
	}
	month, _, _ := monthWindow(time.Now())
	key := usageKey("giver", month)
	if n, _ := rdb.Get(ctx, key).Int64(); n != 10 {
		t.Fatalf("counter after one lease = %d, want 10", n)
	}
	stop()
	if n, _ := rdb.Get(ctx, key).Int64(); n != 1 {
		t.Errorf("counter after shutdown = %d, want 1", n)
	}
	// The rate's 9 unspent tokens are back too: an exact check now sees
	// the burst less the two requests made.
	exact, _ := redisLimiter(t, url)
	if d := exact.Allow(ctx, p); d.Err != nil || d.Remaining < 98 {
		t.Errorf("exact check after the give-back: %+v, want 98 remaining", d)
	}

	// A lease left idle expires back by itself.
	l2, _ := leasedLimiter(t, url, nil)
	runLeased(t, l2)
	if d := l2.Allow(ctx, p); d.Err != nil || d.Used != 3 {
		t.Fatalf("request on a second replica: %+v", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	n, _ := rdb.Get(ctx, key).Int64()
	for n != 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n, _ = rdb.Get(ctx, key).Int64()
	}
	if n != 3 {
		t.Errorf("counter after the lease expired = %d, want 3", n)
	}
	if got := testutil.ToFloat64(l2.leases.WithLabelValues("return")); got < 1 {
		t.Errorf("returns counted %v", got)
	}
}

// A replica's tokens are for one month: at the turn of the month it leases
// from the new month's counter, which drops the old one, and last month's
// unspent tokens are neither spent nor given back to the new month.
func TestLeasedMonthRollover(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{t: time.Date(2026, 1, 31, 23, 59, 59, 500_000_000, time.UTC)}
	l, rdb := leasedLimiter(t, testenv.Redis(t), clock.now)
	p := auth.Principal{KeyID: "roll", MonthlyQuota: 1000}
	for i := range 3 {
		if d := l.Allow(ctx, p); d.Err != nil || d.Used != int64(i+1) {
			t.Fatalf("January request %d: %+v", i, d)
		}
	}
	if n, _ := rdb.Get(ctx, usageKey("roll", "2026-01")).Int64(); n != 10 {
		t.Fatalf("January's counter = %d, want one lease of 10", n)
	}
	clock.advance(time.Second)
	if d := l.Allow(ctx, p); d.Err != nil || d.Used != 1 || d.QuotaResetAfter != 28*24*time.Hour-500*time.Millisecond {
		t.Fatalf("first request of February: %+v", d)
	}
	if n, _ := rdb.Get(ctx, usageKey("roll", "2026-02")).Int64(); n != 10 {
		t.Errorf("February's counter = %d, want 10", n)
	}
	if n := rdb.Exists(ctx, usageKey("roll", "2026-01")).Val(); n != 0 {
		t.Error("January's counter is still there after February's first lease")
	}
	l.giveBack(true)
	if n, _ := rdb.Get(ctx, usageKey("roll", "2026-02")).Int64(); n != 1 {
		t.Errorf("February's counter after the give-back = %d, want 1", n)
	}
	if n := rdb.Exists(ctx, usageKey("roll", "2026-01")).Val(); n != 0 {
		t.Error("January's unspent tokens were given back into a counter")
	}
}

// A key with large limits costs one round trip per many requests: the
// point of the lease.
func TestLeasedRoundTrips(t *testing.T) {
	l, _ := leasedLimiter(t, testenv.Redis(t), nil)
	runLeased(t, l)
	p := auth.Principal{KeyID: "busy", RatePerSecond: 1_000_000, MonthlyQuota: 2_000_000_000}
	const requests = 10_000
	for range requests {
		if d := l.Allow(context.Background(), p); d.Err != nil || d.Degraded {
			t.Fatalf("%+v", d)
		}
	}
	leases := testutil.ToFloat64(l.leases.WithLabelValues("lease"))
	// A refill starts at half a lease (50 tokens) and one is in flight at
	// a time, so at most one lease per 50 requests, plus the first.
	if leases < 1 || leases > requests/50+1 {
		t.Errorf("%v lease round trips for %d requests", leases, requests)
	}
	t.Logf("%v lease round trips for %d requests", leases, requests)
}

// The sweep gives back an idle key's expired tokens and forgets the key,
// which then starts afresh.
func TestLeasedForgetsIdleKeys(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{t: time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)}
	l, rdb := leasedLimiter(t, testenv.Redis(t), clock.now)
	p := auth.Principal{KeyID: "idle", MonthlyQuota: 1000}
	if d := l.Allow(ctx, p); d.Err != nil || d.Used != 1 {
		t.Fatalf("first request: %+v", d)
	}
	clock.advance(2 * time.Minute)
	l.giveBack(false)
	l.mu.RLock()
	n := len(l.keys)
	l.mu.RUnlock()
	if n != 0 {
		t.Errorf("%d keys still held after two idle minutes", n)
	}
	month, _, _ := monthWindow(clock.now())
	if got, _ := rdb.Get(ctx, usageKey("idle", month)).Int64(); got != 1 {
		t.Errorf("counter = %d after the give-back, want 1", got)
	}
	if d := l.Allow(ctx, p); d.Err != nil || d.Used != 2 {
		t.Errorf("request after the key was forgotten: %+v", d)
	}
}
