package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// cluster is three marketdata-svc replicas run through run("serve") in
// this process, sharing one PostgreSQL database and one Redis database,
// as a deployment's replicas do.
type cluster struct {
	t   *testing.T
	env map[string]string

	mu       sync.Mutex
	replicas []*replica
}

type replica struct {
	addr string
	out  *logbuf.Buffer
	stop func() // graceful shutdown, waits for run to return
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, env: map[string]string{
		"MARKETDATA_DATABASE_URL":   testenv.Postgres(t),
		"MARKETDATA_REDIS_URL":      testenv.Redis(t),
		"MARKETDATA_SHUTDOWN_DRAIN": "0s",
		"MARKETDATA_LOG_LEVEL":      "warn",
		// Every Redis call of this test must get its answer: on two busy
		// cores under the race detector, the default 50 ms would let
		// requests through unchecked (fail open), which is not what is
		// tested here. noDegradation checks that none was.
		"MARKETDATA_CACHE_TIMEOUT": "5s",
	}}
	c.cmd("migrate")
	return c
}

// cmd runs a command of the binary against the cluster's stores.
func (c *cluster) cmd(args ...string) string {
	c.t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, func(k string) string { return c.env[k] }, &out); err != nil {
		c.t.Fatalf("%v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// key creates a key of quota (0: none) and returns it.
func (c *cluster) key(quota int) string {
	c.t.Helper()
	lines := strings.Split(strings.TrimSpace(c.cmd("keys", "create", "--account", "acme", "--scopes", "eod",
		"--monthly-quota", strconv.Itoa(quota))), "\n")
	return lines[len(lines)-1]
}

// start starts a replica whose Redis URL is redisURL (the cluster's when
// empty), waits until it is ready and returns it.
func (c *cluster) start(redisURL string) *replica {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{"MARKETDATA_HTTP_ADDR": addr}
	for k, v := range c.env {
		env[k] = v
	}
	if redisURL != "" {
		env["MARKETDATA_REDIS_URL"] = redisURL
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{addr: addr, out: &logbuf.Buffer{}}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, r.out) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					c.t.Errorf("replica %s: %v\n%s", addr, err, r.out.String())
				}
			case <-time.After(30 * time.Second):
				c.t.Errorf("replica %s did not stop", addr)
			}
		})
	}
	c.t.Cleanup(r.stop)
	deadline := time.Now().Add(20 * time.Second)
	for healthcheck.Check(ctx, addr, io.Discard) != nil {
		if time.Now().After(deadline) {
			c.t.Fatalf("replica not ready after 20s:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.mu.Lock()
	c.replicas = append(c.replicas, r)
	c.mu.Unlock()
	return r
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

// get fetches path from r with key; status is 0 when the replica did not
// answer (it is stopping or stopped).
func get(r *replica, path, key string) (status int, body, etag, code string) {
	res, err := client.Get("http://" + r.addr + path + "&access_key=" + key)
	if err != nil {
		return 0, "", "", ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusTooManyRequests {
		if i := bytes.Index(b, []byte(`"code":"`)); i >= 0 {
			code, _, _ = strings.Cut(string(b[i+8:]), `"`)
		}
	}
	return res.StatusCode, string(b), res.Header.Get("ETag"), code
}

// writeBars writes a price file of symbol TEST whose last close is close.
func writeBars(t *testing.T, close string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.csv")
	data := "Date,Open,High,Low,Close,Adj Close,Volume\n" +
		"2024-03-01,10.00,11.00,9.50,10.50,10.50,1000\n" +
		"2024-03-04,10.50,11.50,10.00,11.00,11.00,1200\n" +
		"2024-03-05,11.00,12.00,10.50," + close + "," + close + ",1500\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const eodPath = "/v1/eod?symbols=TEST"

// hammer sends requests through targets() with workers goroutines per
// target until each worker has sent n, and returns the 200s; any answer
// but 200 or 429 usage_limit_reached (or none, from a stopping replica) is
// an error.
func hammer(t *testing.T, targets func() []*replica, key string, workers, n int, ok *atomic.Int64) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range len(targets()) * workers {
		wg.Go(func() {
			for range n {
				rs := targets()
				status, body, _, code := get(rs[i%len(rs)], eodPath, key)
				switch {
				case status == http.StatusOK:
					ok.Add(1)
				case status == http.StatusTooManyRequests && code == "usage_limit_reached":
				case status == 0, status == http.StatusServiceUnavailable:
					// A replica shutting down, in the restart test.
				default:
					t.Errorf("answer %d: %s", status, body)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestThreeReplicas is the multi-replica test: three replicas
// sharing one Redis and one PostgreSQL, two of which never receive the
// data version's pub/sub announcements. It shows that a quota holds in
// total across them, also while one restarts, and that no replica serves
// the older data past the documented bound after an import.
func TestThreeReplicas(t *testing.T) {
	c := newCluster(t)
	c.cmd("import", "--symbol", "TEST", writeBars(t, "11.75"))
	// A sync run is recorded in sync_runs, which every replica exports
	// (marketdata_sync_last_success_timestamp_seconds, for the alerts).
	fake := feedfake.New("")
	fake.Synthetic = 1
	provider := httptest.NewServer(fake.Handler())
	defer provider.Close()
	c.env["MARKETDATA_SYNC_STOOQ_URL"] = provider.URL + "/stooq"
	c.cmd("sync", "--provider", "stooq", "--symbols", "S00000", "--from", "2024-01-02", "--to", "2024-01-05")
	// Replicas 1 and 2 reach Redis through a proxy that drops everything
	// Redis sends on a subscribed connection: they hear no announcement
	// and learn of imports by polling alone.
	drop := [2]*pubsubDropper{newPubsubDropper(t, c.env["MARKETDATA_REDIS_URL"]), newPubsubDropper(t, c.env["MARKETDATA_REDIS_URL"])}
	rs := []*replica{c.start(""), c.start(drop[0].url), c.start(drop[1].url)}
	all := func() []*replica { return rs }

	t.Run("quota", func(t *testing.T) {
		const quota = 600 // leases of 6
		key := c.key(quota)
		shortfall := int64(2 * ratelimit.LeaseSize(0, quota) * 3 / 2)
		var ok atomic.Int64
		hammer(t, all, key, 4, 75, &ok) // 900 requests
		if got := ok.Load(); got > quota || got < quota-shortfall {
			t.Fatalf("first wave: %d of a quota of %d served (documented shortfall at most %d)", got, quota, shortfall)
		}
		// Tokens still held by other replicas come back within a lease
		// lifetime and a sweep; then the key has had exactly its quota.
		spendTheRest(t, all, key, quota, &ok)
		leases, requests := 0.0, 0.0
		for _, r := range rs {
			leases += metric(t, r, `marketdata_ratelimit_leases_total{kind="lease"}`)
			requests += metric(t, r, `marketdata_ratelimit_refused_total{backend="redis",limit="usage"}`)
		}
		t.Logf("%d served, %.0f refused, %.0f lease round trips", ok.Load(), requests, leases)
		noDegradation(t, rs)
		// Every replica has served and refused: together they export all
		// the alerts and dashboards use (the quota refusal time only exists
		// where a quota was refused).
		var scrapes []string
		for _, r := range rs {
			scrapes = append(scrapes, scrape(t, r))
		}
		if missing := missingMetrics(t, scrapes...); len(missing) > 0 {
			t.Errorf("the alerts and dashboards use metrics no replica exports: %v", missing)
		}
	})

	t.Run("restart", func(t *testing.T) {
		const quota = 600
		key := c.key(quota)
		var mu sync.Mutex
		targets := append([]*replica(nil), rs...)
		current := func() []*replica { mu.Lock(); defer mu.Unlock(); return append([]*replica(nil), targets...) }
		var ok atomic.Int64
		load := make(chan struct{})
		go func() { defer close(load); hammer(t, current, key, 3, 60, &ok) }()
		// Mid-load, replica 2 shuts down and a fresh one takes its place.
		for ok.Load() < quota/3 {
			select {
			case <-load:
				t.Fatalf("the load ended before the restart, %d served", ok.Load())
			case <-time.After(5 * time.Millisecond):
			}
		}
		rs[2].stop()
		fresh := c.start(drop[1].url)
		mu.Lock()
		targets[2] = fresh
		mu.Unlock()
		<-load
		if got := ok.Load(); got > quota {
			t.Fatalf("%d served across the restart, quota %d", got, quota)
		}
		// What the stopped replica held went back at its shutdown: the key
		// still gets all of its quota, and no more.
		spendTheRest(t, current, key, quota, &ok)
		rs[2] = fresh
		noDegradation(t, rs)
	})

	t.Run("freshness", func(t *testing.T) {
		key := c.key(0)
		var before []string
		for _, r := range rs {
			// Twice: the second answer is a cache hit from process memory.
			for range 2 {
				status, body, etag, _ := get(r, eodPath, key)
				if status != http.StatusOK || !strings.Contains(body, `"close":11.75`) {
					t.Fatalf("before the import: %d %s", status, body)
				}
				before = append(before, etag)
			}
		}
		c.cmd("import", "--symbol", "TEST", writeBars(t, "12.25"))
		// The documented bound (internal/dataversion): the poll interval
		// plus one read, which times out after another poll interval.
		deadline := time.Now().Add(2 * dataversion.DefaultPollInterval)
		for i, r := range rs {
			for {
				start := time.Now()
				status, body, etag, _ := get(r, eodPath, key)
				if status != http.StatusOK {
					t.Fatalf("replica %d: %d %s", i, status, body)
				}
				if strings.Contains(body, `"close":12.25`) {
					if etag == before[2*i] {
						t.Errorf("replica %d: new data under the old ETag %s", i, etag)
					}
					break
				}
				if start.After(deadline) {
					t.Fatalf("replica %d still serves the older data (ETag %s) past the bound", i, etag)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		// The proxies did drop an announcement: those replicas learned of
		// the import by polling.
		for i, d := range drop {
			deadline := time.Now().Add(5 * time.Second)
			for !d.droppedAnnouncement() && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !d.droppedAnnouncement() {
				t.Errorf("proxy %d dropped no announcement: the replica may have heard it", i)
			}
		}
	})
}

// noDegradation fails the test when a replica let a request through
// unchecked: the limits were then not what was tested.
func noDegradation(t *testing.T, rs []*replica) {
	t.Helper()
	for i, r := range rs {
		if n := metric(t, r, `marketdata_ratelimit_errors_total{backend="redis"}`); n != 0 {
			t.Errorf("replica %d let %.0f requests through unchecked (Redis too slow or down)", i, n)
		}
	}
}

// metric reads one sample of r's /metrics; 0 when absent.
func metric(t *testing.T, r *replica, name string) float64 {
	t.Helper()
	res, err := client.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// pubsubDropper is a TCP proxy to Redis that forwards every connection
// both ways until the client subscribes; from then on it drops what Redis
// sends on that connection. A Source behind it subscribes without error
// and never hears an announcement: a lost message, on the wire.
type pubsubDropper struct {
	url string

	mu      sync.Mutex
	dropped []byte
}

func newPubsubDropper(t *testing.T, redisURL string) *pubsubDropper {
	t.Helper()
	host := strings.TrimPrefix(redisURL, "redis://")
	host, db, _ := strings.Cut(host, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pubsubDropper{url: strings.Replace(redisURL, host+"/"+db, ln.Addr().String()+"/"+db, 1)}
	var conns sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	})
	conns.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", host)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			open[client], open[server] = struct{}{}, struct{}{}
			mu.Unlock()
			var subscribed atomic.Bool
			conns.Go(func() { p.pipe(server, client, func(b []byte) bool { return p.watch(b, &subscribed) }) })
			conns.Go(func() { p.pipe(client, server, func(b []byte) bool { return p.keep(b, &subscribed) }) })
		}
	})
	return p
}

// watch marks the connection subscribed when the client subscribes; it
// forwards everything the client sends.
func (p *pubsubDropper) watch(b []byte, subscribed *atomic.Bool) bool {
	if bytes.Contains(bytes.ToLower(b), []byte("subscribe")) {
		subscribed.Store(true)
	}
	return true
}

// keep forwards what Redis sends unless the connection is subscribed.
func (p *pubsubDropper) keep(b []byte, subscribed *atomic.Bool) bool {
	if !subscribed.Load() {
		return true
	}
	p.mu.Lock()
	p.dropped = append(p.dropped, b...)
	p.mu.Unlock()
	return false
}

// droppedAnnouncement reports whether an announcement on the data
// version's channel was among what was dropped.
func (p *pubsubDropper) droppedAnnouncement() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := bytes.Index(p.dropped, []byte("message"))
	return i >= 0 && bytes.Contains(p.dropped[i:], []byte(dataversion.Channel))
}

func (p *pubsubDropper) pipe(dst, src net.Conn, forward func([]byte) bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && forward(buf[:n]) {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// spendTheRest asks for key through targets until ok reaches quota (tokens
// held by replicas come back within a lease lifetime and a sweep, 10 s at
// the most), then a little more: the key must have had exactly its quota.
func spendTheRest(t *testing.T, targets func() []*replica, key string, quota int64, ok *atomic.Int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ok.Load() < quota && time.Now().Before(deadline) {
		hammer(t, targets, key, 1, 3, ok)
		time.Sleep(50 * time.Millisecond)
	}
	hammer(t, targets, key, 2, 10, ok)
	if got := ok.Load(); got != quota {
		t.Fatalf("%d served in all, want exactly %d", got, quota)
	}
}
