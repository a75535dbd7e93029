package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// clusterNodeTimeout is the cluster's cluster-node-timeout: how long a
// primary may be silent before its replica takes over. Short, so that the
// failover tests are quick.
const clusterNodeTimeout = 1000 * time.Millisecond

// Cluster is a Redis Cluster of three primaries with one replica each,
// started from the same Redis binary as Redis: in Docker mode one
// container running six redis-server processes on the host's network, in
// local-stack mode (MARKETDATA_TEST_REDIS_URL set) six local processes.
type Cluster struct {
	// Addrs are the host:port of every node, primaries and replicas.
	Addrs []string
}

var cluster leased[*Cluster]

// leased is a server set the binary starts on first use and leases to one
// test at a time, so that each test starts on servers it owns alone.
type leased[T any] struct {
	once sync.Once
	err  error
	v    T
	busy sync.Mutex
}

// lease starts the servers with start on first use, failing t with what
// when they could not be, and holds them for t until it ends.
func (l *leased[T]) lease(t testing.TB, what string, start func() (T, error)) T {
	t.Helper()
	require(t)
	l.once.Do(func() { l.v, l.err = start() })
	if l.err != nil {
		t.Fatalf("testenv: %s: %v", what, l.err)
	}
	l.busy.Lock()
	t.Cleanup(l.busy.Unlock)
	return l.v
}

// RedisCluster returns the binary's cluster, started on first use and
// stopped by Main, flushed and owned by t until t ends. A test calls it
// once: a second call would wait for the first's test to end.
func RedisCluster(t testing.TB) *Cluster {
	t.Helper()
	c := cluster.lease(t, "redis cluster", startCluster)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("testenv: redis cluster: %v", err)
	}
	rdb := c.client()
	defer rdb.Close()
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.FlushAll(ctx).Err() }); err != nil {
		t.Fatalf("testenv: flush redis cluster: %v", err)
	}
	return c
}

// client is a plain cluster client for the environment's own use.
func (c *Cluster) client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
}

// Client returns a cluster client that t closes at its end.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	rdb := c.client()
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// WaitHealthy waits until every node reports cluster_state:ok and the
// cluster has three primaries that each have a replica (again, after a
// failover).
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	var last string
	for {
		if last = c.health(ctx); last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not healthy: %s", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// health is "" when the cluster is whole, else what is wrong.
func (c *Cluster) health(ctx context.Context) string {
	primaries, replicas := 0, 0
	for _, a := range c.Addrs {
		n := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		info, err := n.ClusterInfo(ctx).Result()
		role, rerr := n.Do(ctx, "ROLE").Slice()
		n.Close()
		if err != nil || rerr != nil {
			return a + " does not answer"
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return a + " is not ok"
		}
		if r, _ := role[0].(string); r == "master" {
			primaries++
		} else {
			replicas++
		}
	}
	if primaries != 3 || replicas != 3 {
		return fmt.Sprintf("%d primaries and %d replicas", primaries, replicas)
	}
	return ""
}

// PrimaryFor returns the address of the primary that holds key's slot.
func (c *Cluster) PrimaryFor(ctx context.Context, key string) (string, error) {
	rdb := c.client()
	defer rdb.Close()
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", err
	}
	shards, err := rdb.ClusterShards(ctx).Result()
	if err != nil {
		return "", err
	}
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start <= slot && slot <= r.End {
				for _, n := range sh.Nodes {
					if n.Role == "master" && n.Health == "online" {
						return n.IP + ":" + strconv.FormatInt(n.Port, 10), nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("no primary serves slot %d", slot)
}

func startCluster() (*Cluster, error) {
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	for _, p := range ports {
		c.Addrs = append(c.Addrs, "127.0.0.1:"+strconv.Itoa(p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := startServers(ctx, "cluster", func(dir string) string { return clusterScript(dir, ports) }); err != nil {
		return nil, err
	}
	return c, c.WaitHealthy(ctx)
}

// clusterScript starts six cluster nodes in dir, joins them, and prints
// "ready".
func clusterScript(dir string, ports []int) string {
	var b strings.Builder
	b.WriteString("set -e\nmkdir -p " + dir + "\n")
	for _, p := range ports {
		n := strconv.Itoa(p)
		fmt.Fprintf(&b, "redis-server --port %s --bind 127.0.0.1 --protected-mode no --daemonize yes --dir %s"+
			" --cluster-enabled yes --cluster-config-file nodes-%s.conf --cluster-node-timeout %d --cluster-announce-ip 127.0.0.1"+
			" --cluster-replica-validity-factor 0 --enable-debug-command yes --save '' --appendonly no"+
			" --pidfile %s/%s.pid --logfile %s/%s.log\n", n, dir, n, clusterNodeTimeout.Milliseconds(), dir, n, dir, n)
	}
	var addrs []string
	for _, p := range ports {
		n := strconv.Itoa(p)
		addrs = append(addrs, "127.0.0.1:"+n)
		fmt.Fprintf(&b, "i=0; until redis-cli -p %s ping >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done\n", n)
	}
	b.WriteString("redis-cli --cluster create " + strings.Join(addrs, " ") + " --cluster-replicas 1 --cluster-yes >" + dir + "/create.log\n")
	b.WriteString("echo ready\n")
	return b.String()
}

// startServers runs script, which starts redis-server processes in dir
// and prints "ready" when they serve: in local-stack mode
// (MARKETDATA_TEST_REDIS_URL set) on this machine, from its redis-server,
// else in one container of the test Redis image on the host's network, so
// that the addresses the servers announce (127.0.0.1 and their ports)
// work from the host. Main stops them.
func startServers(ctx context.Context, what string, script func(dir string) string) error {
	if os.Getenv(RedisURLEnv) != "" {
		dir, err := os.MkdirTemp("", "testenv-"+what+"-")
		if err != nil {
			return err
		}
		env.cleanups = append(env.cleanups, func() {
			_ = exec.Command("sh", "-c", "kill -9 $(cat "+dir+"/*.pid) 2>/dev/null").Run() // #nosec G204 -- a temp dir of ours
			os.RemoveAll(dir)
		})
		out, err := exec.CommandContext(ctx, "sh", "-c", script(dir)).CombinedOutput() // #nosec G204 -- script built from numbers and a temp dir
		if err != nil {
			return fmt.Errorf("start local %s (needs redis-server and redis-cli): %w: %s", what, err, out)
		}
		fmt.Fprintln(os.Stderr, "testenv: redis", what, "from the local redis-server")
		return nil
	}
	// PID 1 ends at once on SIGTERM, so termination takes no grace period.
	sh := script("/tmp/"+what) + "trap \"exit 0\" TERM\nwhile :; do sleep 1; done\n"
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:              imageFromEnv(RedisImageEnv, "tickerdesk/test-redis:7"),
			Entrypoint:         []string{"sh", "-c", sh},
			HostConfigModifier: func(hc *container.HostConfig) { hc.NetworkMode = "host" },
			WaitingFor:         wait.ForLog("ready").WithStartupTimeout(time.Minute),
		},
		Started: true,
	})
	if ctr != nil {
		env.containers = append(env.containers, ctr)
	}
	if err != nil {
		return fmt.Errorf("start %s container: %w", what, err)
	}
	fmt.Fprintln(os.Stderr, "testenv: redis", what, "in a container")
	return nil
}

// freePorts finds n ports p in 20000..29999 with p and p+10000 (the
// node's cluster bus) free on 127.0.0.1 now, below the usual ephemeral
// range so that no client connection takes them meanwhile.
func freePorts(n int) ([]int, error) {
	var ports []int
	start := 20000 + int(time.Now().UnixNano()%9000)
	for p := start; len(ports) < n && p < start+1000; p++ {
		if free(p) && free(p+10000) {
			ports = append(ports, p)
		}
	}
	if len(ports) < n {
		return nil, fmt.Errorf("no %d free ports from %d", n, start)
	}
	return ports, nil
}

func free(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// SlotCheck records the keys of every script that a client runs (EVAL,
// EVALSHA, alone or in a pipeline); Verify asks the cluster (CLUSTER
// KEYSLOT) whether each script's keys share one slot, as a Redis Cluster
// requires of one script.
type SlotCheck struct {
	mu   sync.Mutex
	sets map[string][]string
}

// CheckSlots installs a SlotCheck on rdb and verifies it when t ends.
func (c *Cluster) CheckSlots(t testing.TB, rdb redis.UniversalClient) *SlotCheck {
	s := &SlotCheck{sets: map[string][]string{}}
	rdb.AddHook(s)
	t.Cleanup(func() {
		if err := s.Verify(context.Background(), c); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Scripts returns how many distinct key sets were recorded.
func (s *SlotCheck) Scripts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sets)
}

// Verify reports the first recorded script whose keys span slots.
func (s *SlotCheck) Verify(ctx context.Context, c *Cluster) error {
	rdb := c.client()
	defer rdb.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, keys := range s.sets {
		first := int64(-1)
		for _, k := range keys {
			slot, err := rdb.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				return fmt.Errorf("testenv: cluster keyslot: %w", err)
			}
			if first >= 0 && slot != first {
				return fmt.Errorf("testenv: one script's keys %q span slots %d and %d: give them a common hash tag {...}", keys, first, slot)
			}
			first = slot
		}
	}
	return nil
}

func (s *SlotCheck) record(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	if (name != "eval" && name != "evalsha" && name != "eval_ro" && name != "evalsha_ro") || len(args) < 3 {
		return
	}
	n, _ := strconv.Atoi(fmt.Sprint(args[2]))
	if n < 2 || len(args) < 3+n {
		return
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(args[3+i])
	}
	s.mu.Lock()
	if len(s.sets) < 10_000 {
		s.sets[strings.Join(keys, "\x00")] = keys
	}
	s.mu.Unlock()
}

// DialHook is redis.Hook's; SlotCheck leaves dialling alone.
func (s *SlotCheck) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook records a script run alone.
func (s *SlotCheck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.record(cmd)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook records the scripts in a pipeline.
func (s *SlotCheck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			s.record(cmd)
		}
		return next(ctx, cmds)
	}
}

// Reset forgets what was recorded.
func (s *SlotCheck) Reset() {
	s.mu.Lock()
	s.sets = map[string][]string{}
	s.mu.Unlock()
}
