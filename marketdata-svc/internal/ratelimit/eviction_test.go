package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestQuotaSurvivesCacheEviction reproduces an outside audit's finding: nothing bounded the
// cache's memory in Redis, and bounding it must not cost limiter state. The
// deployment runs Redis with maxmemory and the volatile-lru policy
// (deploy/compose, deploy/README.md), which evicts only keys with an expiry:
// cache entries expire, so they go; the monthly usage counters and the data
// version carry none, so they stay. The test fills a Redis with that policy
// with cache-like entries far past its maxmemory and checks that a key's
// quota and the data version are intact and still enforced.
func TestQuotaSurvivesCacheEviction(t *testing.T) {
	ctx := context.Background()
	url := testenv.Redis(t)
	l, rdb := redisLimiter(t, url)
	// The data version's key, which carries no expiry either.
	const versionKey = "eviction-test:version"
	cfg := func(k, v string) {
		t.Helper()
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	old := rdb.ConfigGet(ctx, "maxmemory*").Val()
	t.Cleanup(func() {
		for k, v := range old {
			_ = rdb.ConfigSet(context.Background(), k, v).Err()
		}
	})
	if err := rdb.Set(ctx, versionKey, 42, 0).Err(); err != nil {
		t.Fatal(err)
	}
	const quota = 50
	p := auth.Principal{KeyID: "evict-me", MonthlyQuota: quota}
	for range 30 {
		if d := l.Allow(ctx, p); d.Err != nil {
			t.Fatal(d.Err)
		}
	}

	used := rdb.Info(ctx, "memory").Val()
	base := infoInt(used, "used_memory")
	cfg("maxmemory", strconv.FormatInt(base+2<<20, 10))
	cfg("maxmemory-policy", "volatile-lru")
	page := strings.Repeat("p", 16<<10)
	for i := range 2000 { // 32 MB of pages into a 2 MB budget
		if err := rdb.Set(ctx, fmt.Sprintf("eod:%d:page-%d", 42, i), page, 5*time.Minute).Err(); err != nil {
			t.Fatalf("cache write %d: %v", i, err)
		}
	}
	if evicted := infoInt(rdb.Info(ctx, "stats").Val(), "evicted_keys"); evicted == 0 {
		t.Fatal("no key was evicted: the test did not put Redis under pressure")
	}
	month, _, _ := monthWindow(time.Now())
	if n, err := rdb.Get(ctx, usageKey("evict-me", month)).Int64(); err != nil || n != 30 {
		t.Fatalf("usage counter after eviction = %d, %v; want 30", n, err)
	}
	if v, err := rdb.Get(ctx, versionKey).Int64(); err != nil || v != 42 {
		t.Fatalf("data version after eviction = %d, %v; want 42", v, err)
	}
	allowed := 0
	for range 40 {
		if l.Allow(ctx, p).Err == nil {
			allowed++
		}
	}
	if allowed != quota-30 {
		t.Errorf("after eviction %d more requests passed, want %d", allowed, quota-30)
	}
}

func infoInt(info, field string) int64 {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// TestPreviousMonthCounterIsDropped: usage counters carry no expiry (see
// limitScript), so the first count of a month removes the last month's.
func TestPreviousMonthCounterIsDropped(t *testing.T) {
	ctx := context.Background()
	l, rdb := redisLimiter(t, testenv.Redis(t))
	l.now = func() time.Time { return time.Date(2026, 3, 1, 0, 0, 5, 0, time.UTC) }
	if err := rdb.Set(ctx, usageKey("rollover", "2026-02"), 17, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(ctx, auth.Principal{KeyID: "rollover", MonthlyQuota: 10}); d.Err != nil || d.Used != 1 {
		t.Fatalf("first request of March: %+v", d)
	}
	if n := rdb.Exists(ctx, usageKey("rollover", "2026-02")).Val(); n != 0 {
		t.Error("February's counter is still there after March's first count")
	}
	if n, _ := rdb.Get(ctx, usageKey("rollover", "2026-03")).Int64(); n != 1 {
		t.Errorf("March's counter = %d, want 1", n)
	}
}
