package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestRedisClusterPrimaryDown is the failover test: two replicas on
// a Redis Cluster (MARKETDATA_REDIS_CLUSTER_ADDRS) under load; one Redis
// primary goes silent (DEBUG SLEEP, as a hung or cut-off host) until its
// replica takes over. Every request is still answered 200, from
// PostgreSQL while the slot is down, and caching resumes after the
// failover: a page one service instance stores is a hit for the other,
// which never held it in memory. The time from the outage to that is
// logged (RELIABILITY.md, "## Redis Cluster").
func TestRedisClusterPrimaryDown(t *testing.T) {
	rc := testenv.RedisCluster(t)
	c := newCluster(t)
	delete(c.env, "MARKETDATA_REDIS_URL")
	c.env["MARKETDATA_REDIS_CLUSTER_ADDRS"] = strings.Join(rc.Addrs, ",")
	// Short, so that a silent primary costs a request little before it
	// falls back to PostgreSQL.
	c.env["MARKETDATA_CACHE_TIMEOUT"] = "100ms"
	c.cmd("import", "--symbol", "TEST", writeBars(t, "11.75"))
	key := c.key(0)
	writer, reader := c.start(""), c.start("")

	var next atomic.Int64
	fresh := func() string { return fmt.Sprintf("%s&limit=1&offset=%d", eodPath, next.Add(1)) }
	// shared: writer answers a page new to both (a miss, which it stores),
	// then reader asks for it: a hit only if it came from Redis.
	shared := func() bool {
		path := fresh()
		if status, body, _, _ := get(writer, path, key); status != http.StatusOK {
			t.Fatalf("writer: %d %s", status, body)
		}
		before := metric(t, reader, `marketdata_cache_hits_total{backend="redis"}`)
		if status, body, _, _ := get(reader, path, key); status != http.StatusOK {
			t.Fatalf("reader: %d %s", status, body)
		}
		return metric(t, reader, `marketdata_cache_hits_total{backend="redis"}`) > before
	}
	for range 10 {
		if !shared() {
			t.Fatal("before the outage, a page stored by one instance was not a hit for the other")
		}
	}

	// Background load on both instances for the whole outage.
	var ok, failed atomic.Int64
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	for _, r := range []*replica{writer, reader} {
		load.Go(func() {
			for {
				select {
				case <-stopLoad:
					return
				default:
				}
				if status, _, _, _ := get(r, eodPath, key); status == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}

	ctx := context.Background()
	victim, err := rc.PrimaryFor(ctx, "marketdata:eod:probe")
	if err != nil {
		t.Fatal(err)
	}
	errorsBefore := metric(t, writer, `marketdata_cache_errors_total{backend="redis",op="lookup"}`) +
		metric(t, writer, `marketdata_cache_errors_total{backend="redis",op="store"}`)
	sleeper := redis.NewClient(&redis.Options{Addr: victim, ReadTimeout: -1})
	defer sleeper.Close()
	const silence = 8 // seconds
	slept := make(chan error, 1)
	go func() { slept <- sleeper.Do(ctx, "DEBUG", "SLEEP", silence).Err() }()
	// The outage starts when the primary stops answering, not when the
	// command leaves.
	probe := redis.NewClient(&redis.Options{Addr: victim, MaxRetries: -1, ReadTimeout: 100 * time.Millisecond})
	defer probe.Close()
	for probe.Ping(ctx).Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	killed := time.Now()

	// Caching has resumed once 15 pages in a row, each in a random slot,
	// were shared through Redis: while a third of the slots is down, that
	// happens with a chance of (2/3)^15, under 0.3 %.
	var resumed time.Time
	streak, tries := 0, 0
	deadline := time.Now().Add(45 * time.Second)
	for streak < 15 {
		if time.Now().After(deadline) {
			t.Fatalf("caching did not resume within 45 s of the outage (%d pages tried)", tries)
		}
		tries++
		if shared() {
			if streak == 0 {
				resumed = time.Now()
			}
			streak++
		} else {
			streak = 0
		}
	}
	failover := resumed.Sub(killed)
	close(stopLoad)
	load.Wait()
	if err := <-slept; err != nil {
		t.Errorf("DEBUG SLEEP on %s: %v", victim, err)
	}
	errorsDuring := metric(t, writer, `marketdata_cache_errors_total{backend="redis",op="lookup"}`) +
		metric(t, writer, `marketdata_cache_errors_total{backend="redis",op="store"}`) - errorsBefore
	t.Logf("redis cluster failover: primary %s silent at 0 s, cached hits again after %.1f s; %d requests answered 200 meanwhile, %d failed; %d cache calls failed over to PostgreSQL",
		victim, failover.Seconds(), ok.Load(), failed.Load(), int(errorsDuring))
	if failed.Load() != 0 || ok.Load() == 0 {
		t.Errorf("during the outage: %d answered 200, %d not; want all 200", ok.Load(), failed.Load())
	}
	if errorsDuring == 0 {
		t.Error("no cache call failed: the primary was never down for the service, so the test proved nothing")
	}
	// The old primary, awake again, rejoins as a replica: the cluster is
	// whole for the next test.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := rc.WaitHealthy(wctx); err != nil {
		t.Errorf("cluster after the failover: %v", err)
	}
}
