package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestSentinelFollowsPrimarySwitch: in Sentinel mode the cache finds the
// primary through a real sentinel and, after the sentinel switches to the
// replica, goes on caching there: a page stored before the switch is a
// hit for a fresh instance after it (it was replicated), and new pages
// are stored on the new primary.
func TestSentinelFollowsPrimarySwitch(t *testing.T) {
	s := testenv.RedisSentinel(t)
	conn := RedisConn{SentinelAddrs: []string{s.Addr}, SentinelMaster: testenv.SentinelMaster}
	inner := &countingStore{}
	before := newCacheOn(t, conn, inner, at(0), time.Second)
	mustEOD(t, before, query("GOOG"))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary, err := s.Failover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// hit tells whether a fresh instance (empty process memory) finds
	// sym's page in Redis.
	hit := func(sym string) bool {
		c := newCacheOn(t, conn, inner, at(0), time.Second)
		mustEOD(t, c, query(sym))
		return testutil.ToFloat64(c.metrics.hits) == 1
	}
	// The page stored before the switch was replicated: the new primary
	// serves it. Calls may fail (and fall back) until the client has
	// heard of the switch; polling allows for that.
	for !hit("GOOG") {
		if ctx.Err() != nil {
			t.Fatalf("the page stored before the switch is no hit from the new primary %s", primary)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The instance connected before the switch stores new pages on the
	// new primary.
	for i := 0; ; i++ {
		sym := fmt.Sprintf("S%d", i)
		mustEOD(t, before, query(sym))
		if hit(sym) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the instance connected before the switch stores nothing on the new primary %s", primary)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The sentinel names the new primary, which holds the pages.
	rdb := redis.NewClient(&redis.Options{Addr: primary})
	defer rdb.Close()
	if role, err := rdb.Do(ctx, "ROLE").Slice(); err != nil || role[0] != "master" {
		t.Errorf("new primary %s: role %v, %v", primary, role, err)
	}
	if n := rdb.DBSize(ctx).Val(); n < 2 {
		t.Errorf("new primary holds %d keys, want the pages", n)
	}
}
