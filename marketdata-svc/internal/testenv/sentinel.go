package testenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name under which Sentinel monitors the primary.
const SentinelMaster = "tickerdesk"

// Sentinel is a Redis primary with one replica, watched by one Sentinel
// (redis-server --sentinel, the same binary), started as the Cluster is.
type Sentinel struct {
	// Addr is the sentinel's host:port.
	Addr string
}

var sentinel leased[*Sentinel]

// RedisSentinel returns the binary's Sentinel setup, started on first use,
// stopped by Main, with both servers flushed and owned by t until it ends.
func RedisSentinel(t testing.TB) *Sentinel {
	t.Helper()
	s := sentinel.lease(t, "redis sentinel", startSentinel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary, err := s.Primary(ctx)
	if err == nil {
		rdb := redis.NewClient(&redis.Options{Addr: primary})
		err = rdb.FlushAll(ctx).Err()
		rdb.Close()
	}
	if err != nil {
		t.Fatalf("testenv: redis sentinel: %v", err)
	}
	return s
}

// Primary asks the sentinel for the current primary's address.
func (s *Sentinel) Primary(ctx context.Context) (string, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer sc.Close()
	addr, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
	if err != nil {
		return "", fmt.Errorf("sentinel get-master-addr-by-name: %w", err)
	}
	return strings.Join(addr, ":"), nil
}

// Failover makes the sentinel switch the primary (SENTINEL FAILOVER) and
// returns the new primary's address once the sentinel names it.
func (s *Sentinel) Failover(ctx context.Context) (string, error) {
	old, err := s.Primary(ctx)
	if err != nil {
		return "", err
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer sc.Close()
	// The sentinel refuses (NOGOODSLAVE) until it has recent INFO from the
	// replica, just after start or while an old primary turns replica, and
	// (INPROG) while an earlier test's failover is still finishing.
	for {
		err := sc.Failover(ctx, SentinelMaster).Err()
		if err == nil {
			break
		}
		if !redis.HasErrorPrefix(err, "NOGOODSLAVE") && !redis.HasErrorPrefix(err, "INPROG") || ctx.Err() != nil {
			return "", fmt.Errorf("sentinel failover: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		if now, err := s.Primary(ctx); err == nil && now != old {
			return now, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("sentinel failover: still %s: %w", old, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func startSentinel() (*Sentinel, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	p, r, s := strconv.Itoa(ports[0]), strconv.Itoa(ports[1]), strconv.Itoa(ports[2])
	script := func(dir string) string {
		node := "redis-server --port %s --bind 127.0.0.1 --protected-mode no --daemonize yes --dir " + dir +
			" --save '' --appendonly no --pidfile " + dir + "/%s.pid --logfile " + dir + "/%s.log"
		return "set -e\nmkdir -p " + dir + "\n" +
			fmt.Sprintf(node, p, p, p) + "\n" +
			fmt.Sprintf(node, r, r, r) + " --replicaof 127.0.0.1 " + p + "\n" +
			"i=0; until redis-cli -p " + r + " info replication | grep -q master_link_status:up; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done\n" +
			"printf 'port " + s + "\\nbind 127.0.0.1\\nprotected-mode no\\ndaemonize yes\\npidfile " + dir + "/" + s + ".pid\\nlogfile " + dir + "/" + s + ".log\\n" +
			"sentinel monitor " + SentinelMaster + " 127.0.0.1 " + p + " 1\\nsentinel down-after-milliseconds " + SentinelMaster + " 1000\\n" +
			"sentinel failover-timeout " + SentinelMaster + " 5000\\n' > " + dir + "/sentinel.conf\n" +
			"redis-server " + dir + "/sentinel.conf --sentinel\n" +
			"i=0; until redis-cli -p " + s + " sentinel replicas " + SentinelMaster + " 2>/dev/null | grep -q " + r + "; do i=$((i+1)); [ $i -lt 300 ] || exit 1; sleep 0.1; done\n" +
			"echo ready\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := startServers(ctx, "sentinel", script); err != nil {
		return nil, err
	}
	return &Sentinel{Addr: "127.0.0.1:" + s}, nil
}
