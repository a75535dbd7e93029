package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestUpgradeUsageKeysKeepsTheMonthsCount: counters written before the hash
// tags are added to the new names (where an upgraded instance may already
// have counted), past months' are dropped, and a second run changes nothing.
func TestUpgradeUsageKeysKeepsTheMonthsCount(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.RedisClient(t)
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	for k, v := range map[string]int{"usage:k1:2026-03": 40, "usage:k2:2026-03": 7, "usage:k1:2026-02": 99, usageKey("k1", "2026-03"): 2} {
		if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for run, want := range []int{2, 0} {
		moved, err := UpgradeUsageKeys(ctx, rdb, now)
		if err != nil || moved != want {
			t.Fatalf("run %d: moved %d, %v; want %d", run, moved, err, want)
		}
	}
	for k, want := range map[string]int64{usageKey("k1", "2026-03"): 42, usageKey("k2", "2026-03"): 7} {
		if n, err := rdb.Get(ctx, k).Int64(); err != nil || n != want {
			t.Errorf("%s = %d, %v; want %d", k, n, err, want)
		}
	}
	if n := rdb.Exists(ctx, "usage:k1:2026-03", "usage:k2:2026-03", "usage:k1:2026-02").Val(); n != 0 {
		t.Errorf("%d old-layout counters left", n)
	}
}
