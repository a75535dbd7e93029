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

func TestMain(m *testing.M) { testenv.Main(m) }

func redisLimiter(t testing.TB, url string) (*Redis, *redis.Client) {
	t.Helper()
	rdb := testClient(t, url)
	return NewRedis(rdb, RedisOptions{Timeout: time.Second, Registry: prometheus.NewRegistry()}), rdb
}

// testClient is a client of url configured as the service's: a timeout
// ends the call at once, with no retry.
func testClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// limiter is what every implementation offers.
type limiter interface {
	Allow(ctx context.Context, p auth.Principal) Decision
}

func checkRate(t *testing.T, l limiter) {
	t.Helper()
	p := auth.Principal{KeyID: "rate-key", RatePerSecond: 3}
	for i := range 3 {
		d := l.Allow(context.Background(), p)
		if d.Err != nil || d.Rate != 3 || d.Remaining != 2-i {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := l.Allow(context.Background(), p)
	if d.Err != ErrRateLimited || d.RetryAfter <= 0 || d.RetryAfter > time.Second || d.Remaining != 0 {
		t.Fatalf("burst exceeded: %+v", d)
	}
	// Another key is not affected.
	if d := l.Allow(context.Background(), auth.Principal{KeyID: "other", RatePerSecond: 3}); d.Err != nil {
		t.Errorf("other key refused: %+v", d)
	}
	// A key without limits is never refused and reports none.
	if d := l.Allow(context.Background(), auth.Principal{KeyID: "free"}); d.Err != nil || d.Rate != 0 || d.Quota != 0 {
		t.Errorf("unlimited key: %+v", d)
	}
}

// checkQuota sends concurrent requests against a quota: exactly quota of
// them pass, each counted once.
func checkQuota(t *testing.T, l limiter) {
	t.Helper()
	const quota, n = 5, 20
	p := auth.Principal{KeyID: "quota-key", MonthlyQuota: quota}
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			d := l.Allow(context.Background(), p)
			switch d.Err {
			case nil:
				allowed.Add(1)
			case ErrUsageLimited:
				refused.Add(1)
				if d.RetryAfter <= 0 || d.Used != quota {
					t.Errorf("refusal: %+v", d)
				}
			default:
				t.Errorf("unexpected %v", d.Err)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != quota || refused.Load() != n-quota {
		t.Errorf("allowed %d refused %d, want %d and %d", allowed.Load(), refused.Load(), quota, n-quota)
	}
}

// checkCountedInRedis runs checkRate and checkQuota on l and checks that
// the quota's counter in rdb, whose key it returns, holds exactly the 5
// requests checkQuota was allowed: a limiter that counts in Redis counts
// no request twice and none too few.
func checkCountedInRedis(t *testing.T, l limiter, rdb redis.UniversalClient) (key string) {
	t.Helper()
	checkRate(t, l)
	checkQuota(t, l)
	month, _, _ := monthWindow(time.Now())
	key = usageKey("quota-key", month)
	if n, err := rdb.Get(context.Background(), key).Int64(); err != nil || n != 5 {
		t.Errorf("counter %s = %d, %v; want 5", key, n, err)
	}
	return key
}

func TestRedisLimits(t *testing.T) {
	forEachRedis(t, func(t *testing.T, client func() redis.UniversalClient) {
		rdb := client()
		key := checkCountedInRedis(t, NewRedis(rdb, RedisOptions{Timeout: time.Second, Registry: prometheus.NewRegistry()}), rdb)
		// No expiry: volatile-lru must never evict a quota (see limitScript).
		if ttl := rdb.TTL(context.Background(), key).Val(); ttl != -1 {
			t.Errorf("counter expiry %v, want none", ttl)
		}
	})
}

// TestRedisDownFailsOpen: with Redis down, both modes let requests
// through, degraded and counted; they resume by themselves, and the
// quota spent before the outage still holds after it.
func TestRedisDownFailsOpen(t *testing.T) {
	for _, mode := range []struct {
		name string
		open func(t *testing.T, url string) (limiter, prometheus.Counter)
	}{
		{"exact", func(t *testing.T, url string) (limiter, prometheus.Counter) {
			l, _ := redisLimiter(t, url)
			return l, l.metrics.errors
		}},
		{"lease", func(t *testing.T, url string) (limiter, prometheus.Counter) {
			l, _ := leasedLimiter(t, url, nil)
			return l, l.metrics.errors
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			proxy := testenv.RedisProxy(t)
			l, errs := mode.open(t, proxy.URL)
			p := auth.Principal{KeyID: "k", RatePerSecond: 1, MonthlyQuota: 1}
			if d := l.Allow(context.Background(), p); d.Err != nil || d.Degraded {
				t.Fatalf("before the outage: %+v", d)
			}
			proxy.Stop()
			for range 3 {
				if d := l.Allow(context.Background(), p); d.Err != nil || !d.Degraded {
					t.Fatalf("during the outage: %+v", d)
				}
			}
			if got := counterValue(t, errs); got != 3 {
				t.Errorf("errors counted %v", got)
			}
			proxy.Start()
			if d := l.Allow(context.Background(), p); d.Degraded || d.Err == nil {
				t.Errorf("after the outage: %+v, want a refusal from Redis", d)
			}
		})
	}
}

func TestLocalLimits(t *testing.T) {
	now := time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
	l := NewLocal(prometheus.NewRegistry(), func() time.Time { return now })
	checkRate(t, l)
	checkQuota(t, l)
	// A new month starts a new count.
	now = now.Add(2 * time.Second)
	if d := l.Allow(context.Background(), auth.Principal{KeyID: "quota-key", MonthlyQuota: 5}); d.Err != nil || d.Used != 1 {
		t.Errorf("new month: %+v", d)
	}
	// The rate recovers with time: one request per 1/rate seconds.
	if d := l.Allow(context.Background(), auth.Principal{KeyID: "rate-key", RatePerSecond: 3}); d.Err != nil {
		t.Errorf("after waiting: %+v", d)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	return testutil.ToFloat64(c)
}

// TestMonthCacheMatchesMonthWindow walks across month ends (a leap
// February, a year end, a zone other than UTC): the kept month must give
// what monthWindow computes afresh.
func TestMonthCacheMatchesMonthWindow(t *testing.T) {
	var c monthCache
	zone := time.FixedZone("UTC+10", 10*3600)
	start := time.Date(2024, 1, 31, 20, 0, 0, 0, time.UTC)
	for i := range 2000 {
		now := start.Add(time.Duration(i) * 7 * time.Hour)
		if i%3 == 0 {
			now = now.In(zone)
		}
		m1, r1, w1 := c.window(now)
		m2, r2, w2 := monthWindow(now)
		if m1 != m2 || r1 != r2 || w1 != w2 {
			t.Fatalf("at %v: cache gives %s %v %v, monthWindow %s %v %v", now, m1, r1, w1, m2, r2, w2)
		}
	}
}
