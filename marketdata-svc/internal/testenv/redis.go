package testenv

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// leaseDBs are the Redis database numbers handed to tests; database 0 holds
// only the leases, so a development server on database 0 is never flushed.
const (
	firstLeaseDB = 1
	lastLeaseDB  = 15
	leaseTTL     = 10 * time.Minute
)

// Redis returns the URL of a Redis database that belongs to the test alone:
// a numbered database leased across all concurrently running test binaries,
// empty at the start and flushed at the end.
func Redis(t testing.TB) string {
	t.Helper()
	require(t)
	u, err := url.Parse(env.redisURL)
	if err != nil {
		t.Fatalf("testenv: redis URL does not parse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leases := redis.NewClient(redisOptions(t, u, 0))
	defer leases.Close()
	token := randomHex(8)
	db := -1
	for db < 0 {
		for n := firstLeaseDB; n <= lastLeaseDB; n++ {
			ok, err := leases.SetNX(ctx, leaseKey(n), token, leaseTTL).Result()
			if err != nil {
				t.Fatalf("testenv: lease redis database: %v", err)
			}
			if ok {
				db = n
				break
			}
		}
		if db < 0 {
			select {
			case <-ctx.Done():
				t.Fatal("testenv: no free redis database to lease (all 15 busy for 2 minutes)")
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	client := redis.NewClient(redisOptions(t, u, db))
	if err := client.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("testenv: flush redis database %d: %v", db, err)
	}
	client.Close()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client := redis.NewClient(redisOptions(t, u, db))
		defer client.Close()
		if err := client.FlushDB(ctx).Err(); err != nil {
			t.Errorf("testenv: flush redis database %d: %v", db, err)
		}
		leases := redis.NewClient(redisOptions(t, u, 0))
		defer leases.Close()
		if v, _ := leases.Get(ctx, leaseKey(db)).Result(); v == token {
			leases.Del(ctx, leaseKey(db))
		}
	})
	out := *u
	out.Path = "/" + strconv.Itoa(db)
	return out.String()
}

// RedisClient returns a client on a database leased with Redis; it is
// closed when the test ends.
func RedisClient(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func leaseKey(n int) string { return "testenv:lease:" + strconv.Itoa(n) }

func redisOptions(t testing.TB, u *url.URL, db int) *redis.Options {
	t.Helper()
	v := *u
	v.Path = "/" + strconv.Itoa(db)
	opts, err := redis.ParseURL(v.String())
	if err != nil {
		t.Fatalf("testenv: redis URL does not parse")
	}
	return opts
}

// Proxy is a TCP proxy between a client and Redis that a test can cut and
// restore, or slow down, to simulate an outage or a slow server. Slowing
// the replies alone (SetScriptReplyLatency) models a reply lost after
// Redis applied the command: the client gives up waiting while the command
// has already run. Stop closes
// the listener and every open connection, so clients see connection
// refused; Start listens again on the same address.
type Proxy struct {
	// URL is the Redis URL through the proxy, with the leased database.
	URL string
	// Direct is the same database's URL without the proxy.
	Direct string

	t        testing.TB
	addr     string // listen address, fixed across Stop/Start
	upstream string

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]struct{}
	latency time.Duration
	// replyLatency delays what Redis sends back on a connection that ran
	// a script, on top of latency.
	replyLatency time.Duration
	wg           sync.WaitGroup
	// paused, while Pause holds the proxy, is closed by Resume.
	paused chan struct{}
}

// RedisProxy leases a Redis database (as Redis does) and returns a started
// proxy in front of it. The proxy is closed when the test ends.
func RedisProxy(t testing.TB) *Proxy {
	t.Helper()
	direct, err := url.Parse(Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, upstream: direct.Host, addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}, Direct: direct.String()}
	p.Start()
	p.mu.Lock()
	p.addr = p.ln.Addr().String()
	p.mu.Unlock()
	viaProxy := *direct
	viaProxy.Host = p.addr
	p.URL = viaProxy.String()
	t.Cleanup(p.Stop)
	return p
}

// Start (re)opens the proxy on its address; it is a no-op when running.
func (p *Proxy) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after Stop
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("testenv: proxy listen: %v", err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
}

// Stop cuts the proxy: the listener and all connections are closed. A
// paused proxy is resumed first, so that nothing stays held.
func (p *Proxy) Stop() {
	p.Resume()
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	p.wg.Wait()
}

// SetLatency delays every chunk forwarded in either direction by d, to
// simulate a slow Redis; 0 restores full speed.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// SetScriptReplyLatency delays by d what Redis sends back on a connection
// once the client has run a script on it (EVAL or EVALSHA), and nothing the
// client sends: past the client's timeout, the script still runs in Redis
// while its reply is lost. A new connection's handshake is not delayed, so
// each retry reaches Redis, as on a server slow to answer but not to run.
// 0 restores full speed.
func (p *Proxy) SetScriptReplyLatency(d time.Duration) {
	p.mu.Lock()
	p.replyLatency = d
	p.mu.Unlock()
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // stopped meanwhile
			p.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		p.conns[client] = struct{}{}
		p.conns[server] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		scripted := new(atomic.Bool)
		go p.pipe(server, client, scripted, false)
		go p.pipe(client, server, scripted, true)
	}
}

// pipe copies src to dst; reply is set for the direction from Redis.
// scripted, shared by a connection's two pipes, is set once the client has
// sent a script.
func (p *Proxy) pipe(dst, src net.Conn, scripted *atomic.Bool, reply bool) {
	defer p.wg.Done()
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !reply && !scripted.Load() && bytes.Contains(bytes.ToLower(buf[:n]), []byte("eval")) {
				scripted.Store(true)
			}
			p.mu.Lock()
			d := p.latency
			if reply && scripted.Load() {
				d += p.replyLatency
			}
			paused := p.paused
			p.mu.Unlock()
			if paused != nil {
				<-paused
			}
			if d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF, or the connection was cut by Stop
			return
		}
	}
}
