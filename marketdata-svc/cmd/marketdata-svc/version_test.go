package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// Three instances sharing Redis and PostgreSQL; Redis freezes (a proxy
// that holds every byte, as SIGSTOP does) while an import commits, so the
// import cannot announce its version, then comes back. Each instance
// serves the new rows during the freeze (from the database) and must
// never again serve the old ones: not when Redis, back, still holds the
// old version, nor in the seconds before anything reconciles it with the
// database.
func TestDataVersionNeverGoesBack(t *testing.T) {
	c := newCluster(t)
	proxy := testenv.RedisProxy(t)
	c.env["MARKETDATA_REDIS_URL"] = proxy.URL
	// Requests give up on a frozen Redis quickly, as in production.
	c.env["MARKETDATA_CACHE_TIMEOUT"] = "100ms"
	c.cmd("import", "--symbol", "TEST", writeBars(t, "11.75"))
	rs := []*replica{c.start(""), c.start(""), c.start("")}
	key := c.key(0)

	// Every instance is polled without pause; an answer with the old
	// close, from an instance that has already answered with the new one,
	// is a step back in time.
	type seen struct{ news, back, old, failed atomic.Int64 }
	counts := make([]*seen, len(rs))
	newSeen := make([]atomic.Bool, len(rs))
	for i := range rs {
		counts[i] = &seen{}
	}
	// Two pollers an instance.
	stop := poll(2*len(rs), func(w int) {
		i := w / 2
		after := newSeen[i].Load()
		status, body, _, _ := get(rs[i], eodPath, key)
		switch {
		case status != http.StatusOK:
			counts[i].failed.Add(1)
		case strings.Contains(body, `"close":12.25`):
			counts[i].news.Add(1)
			newSeen[i].Store(true)
		case after:
			counts[i].back.Add(1)
		default:
			counts[i].old.Add(1)
		}
	})
	for _, s := range counts {
		for s.old.Load() < 10 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	proxy.Pause()
	paused := true
	t.Cleanup(func() {
		if paused {
			proxy.Resume()
		}
	})
	time.Sleep(time.Second)
	err := run(context.Background(), []string{"import", "--symbol", "TEST", writeBars(t, "12.25")},
		func(k string) string { return c.env[k] }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not announced") {
		t.Fatalf("import with Redis frozen: %v", err)
	}
	time.Sleep(2 * time.Second)
	proxy.Resume()
	paused = false
	// Longer than the database check's period (20 reads of Redis at the
	// poll interval, 5 s), so that a step back would have happened.
	time.Sleep(7 * time.Second)
	stop()
	for i, s := range counts {
		t.Logf("instance %d: %d old, %d new, %d old after new, %d failed", i, s.old.Load(), s.news.Load(), s.back.Load(), s.failed.Load())
		if s.back.Load() > 0 {
			t.Errorf("instance %d: %d answers with the old close after the new one", i, s.back.Load())
		}
		if s.news.Load() == 0 {
			t.Errorf("instance %d never served the new close", i)
		}
	}
}
