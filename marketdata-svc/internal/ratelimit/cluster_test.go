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

// forEachRedis runs fn against one Redis server (a leased database) and
// against a Redis Cluster of three primaries and three replicas. client
// returns a new client as the service configures one; on the cluster,
// every script it runs is checked to keep its keys in one slot.
func forEachRedis(t *testing.T, fn func(t *testing.T, client func() redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		url := testenv.Redis(t)
		fn(t, func() redis.UniversalClient { return testClient(t, url) })
	})
	t.Run("cluster", func(t *testing.T) {
		c := testenv.RedisCluster(t)
		fn(t, func() redis.UniversalClient { return clusterClient(t, c) })
	})
}

// clusterClient is a client of c configured as the service's, with its
// scripts' slots checked when t ends.
func clusterClient(t testing.TB, c *testenv.Cluster) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	c.CheckSlots(t, rdb)
	return rdb
}

// TestScriptKeysShareASlot runs every script the limiters issue (the exact
// check, a lease, a give-back) on the cluster and asks the cluster whether
// each one's keys share a slot; a key added without the {keyID} hash tag
// fails it. It also checks that the check itself catches keys that do not.
func TestScriptKeysShareASlot(t *testing.T) {
	c := testenv.RedisCluster(t)
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { rdb.Close() })
	check := c.CheckSlots(t, rdb)
	p := auth.Principal{KeyID: "slots", RatePerSecond: 1000, MonthlyQuota: 100_000}
	if d := NewRedis(rdb, RedisOptions{Timeout: time.Second}).Allow(ctx, p); d.Err != nil || d.Degraded {
		t.Fatalf("exact: %+v", d)
	}
	leased := NewLeased(rdb, LeasedOptions{Timeout: time.Second, Registry: prometheus.NewRegistry()})
	stop := runLeased(t, leased)
	if d := leased.Allow(ctx, p); d.Err != nil || d.Degraded {
		t.Fatalf("lease: %+v", d)
	}
	stop() // gives the unspent tokens back: leaseScript with nothing wanted
	if err := check.Verify(ctx, c); err != nil {
		t.Fatal(err)
	}
	// limitKeys (3 keys, the exact script) and the lease script's 4, with
	// the replica's call record.
	if n := check.Scripts(); n < 2 {
		t.Fatalf("%d distinct key sets recorded, want the limit script's and the lease script's", n)
	}

	other := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer other.Close()
	untagged := c.CheckSlots(t, other)
	untagged.ProcessHook(func(context.Context, redis.Cmder) error { return nil })(ctx,
		redis.NewCmd(ctx, "evalsha", "0", 2, "usage:a:2026-01", "usage:b:2026-01"))
	if err := untagged.Verify(ctx, c); err == nil {
		t.Fatal("keys in different slots passed the check")
	}
	untagged.Reset() // the failure above was the point
}
