package dataversion_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixedDatabase is the database's version as a Source reads it.
func fixedDatabase(v int64) func(context.Context) (int64, error) {
	return func(context.Context) (int64, error) { return v, nil }
}

func client(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	// As the service configures it: a short read timeout must not cut
	// the subscription, which waits for messages without one.
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	opts.ReadTimeout = 200 * time.Millisecond
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// run starts s until the test ends.
func run(t *testing.T, s *dataversion.Source) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// waitFor returns how long it took until s reports want (ok false for
// unknown), failing the test after limit.
func waitFor(t *testing.T, s *dataversion.Source, want int64, ok bool, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		v, known := s.Current()
		if known == ok && (!ok || v == want) {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("after %v the source reports %d (known %v), want %d (known %v)", limit, v, known, want, ok)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestAnnouncementIsSeen: with a poll too slow to matter, an import's
// Publish reaches a running Source through pub/sub.
func TestAnnouncementIsSeen(t *testing.T) {
	rdb := client(t, testenv.Redis(t))
	s := dataversion.NewRedis(rdb, fixedDatabase(7), dataversion.Options{PollInterval: time.Hour})
	run(t, s)
	waitFor(t, s, 7, true, 5*time.Second)
	if v, err := rdb.Get(context.Background(), dataversion.Key).Int64(); err != nil || v != 7 {
		t.Fatalf("a Redis without a version was not given the database's: %d, %v", v, err)
	}
	// The announcement only helps once the Source listens.
	for rdb.PubSubNumSub(context.Background(), dataversion.Channel).Val()[dataversion.Channel] == 0 {
		time.Sleep(time.Millisecond)
	}
	// Longer than the read timeout: the subscription is still there.
	time.Sleep(500 * time.Millisecond)
	if held, err := dataversion.Publish(context.Background(), rdb, 8); err != nil || held != 8 {
		t.Fatalf("Publish(8) = %d, %v", held, err)
	}
	d := waitFor(t, s, 8, true, 2*time.Second)
	t.Logf("announcement seen after %v", d)
}

// TestLostAnnouncementIsCoveredByThePoll: a version set without any
// announcement (as if the message were lost) is seen within the poll
// interval.
func TestLostAnnouncementIsCoveredByThePoll(t *testing.T) {
	rdb := client(t, testenv.Redis(t))
	const interval = 100 * time.Millisecond
	s := dataversion.NewRedis(rdb, fixedDatabase(1), dataversion.Options{PollInterval: interval})
	run(t, s)
	waitFor(t, s, 1, true, 5*time.Second)
	// Bumps at different points of the poll's period: the worst is just
	// after a read.
	var worst time.Duration
	for v := int64(2); v <= 6; v++ {
		time.Sleep(time.Duration(v) * interval / 7)
		if err := rdb.Set(context.Background(), dataversion.Key, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, waitFor(t, s, v, true, 5*time.Second))
	}
	t.Logf("silent bumps seen after at most %v (poll interval %v)", worst, interval)
	// One interval plus a read, and scheduling slack on a busy machine.
	if worst > interval+200*time.Millisecond {
		t.Errorf("a silent bump was seen after %v, bound %v", worst, interval)
	}
}

// TestFailedPublishIsReconciled: an import commits but its announcement
// never reaches Redis (Publish failed): the Source finds the database
// ahead within ReconcileEvery reads, and raises Redis's version for every
// other Source too.
func TestFailedPublishIsReconciled(t *testing.T) {
	rdb := client(t, testenv.Redis(t))
	var database atomic.Int64
	database.Store(1)
	s := dataversion.NewRedis(rdb, func(context.Context) (int64, error) { return database.Load(), nil },
		dataversion.Options{PollInterval: 20 * time.Millisecond, ReconcileEvery: 5})
	run(t, s)
	waitFor(t, s, 1, true, 5*time.Second)
	database.Store(7) // committed; nothing published
	waitFor(t, s, 7, true, 10*time.Second)
	if v, err := rdb.Get(context.Background(), dataversion.Key).Int64(); err != nil || v != 7 {
		t.Errorf("Redis holds version %d (%v) after reconciling, want 7", v, err)
	}
}

// TestRedisDownFallsBackToTheDatabase: while Redis cannot be read, the
// version is the database's (an import that commits meanwhile is seen);
// once Redis is back, still holding the version from before, the Source
// does not go back to it, and raises Redis's to the database's at its
// first read; with the database down as well, the version is unknown.
func TestRedisDownFallsBackToTheDatabase(t *testing.T) {
	proxy := testenv.RedisProxy(t)
	rdb := client(t, proxy.URL)
	var database atomic.Int64
	var dbDown atomic.Bool
	database.Store(3)
	s := dataversion.NewRedis(rdb, func(context.Context) (int64, error) {
		if dbDown.Load() {
			return 0, errors.New("database down")
		}
		return database.Load(), nil
	}, dataversion.Options{PollInterval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, ReconcileEvery: 1000})
	run(t, s)
	waitFor(t, s, 3, true, 5*time.Second)
	for _, cut := range []struct {
		name        string
		stop, start func()
	}{{"refused", proxy.Stop, proxy.Start}, {"frozen", proxy.Pause, proxy.Resume}} {
		cut.stop()
		v := database.Add(1) // an import that cannot announce itself
		waitFor(t, s, v, true, 5*time.Second)
		cut.start()
		// Redis still holds the older version: never reported again.
		deadline := time.Now().Add(500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if got, ok := s.Current(); !ok || got != v {
				t.Fatalf("%s: Redis back with an older version: the source reports %d (known %v), want %d", cut.name, got, ok, v)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if got, err := rdb.Get(context.Background(), dataversion.Key).Int64(); err != nil || got != v {
			t.Errorf("%s: Redis holds %d (%v) after it came back, want the database's %d", cut.name, got, err, v)
		}
	}
	proxy.Stop()
	dbDown.Store(true)
	waitFor(t, s, 0, false, 2*time.Second)
	dbDown.Store(false)
	proxy.Start()
	waitFor(t, s, 5, true, 5*time.Second)
}

// TestVersionNeverGoesBack: a Redis version below one already seen (from
// Redis, or observed on a read replica) is not used.
func TestVersionNeverGoesBack(t *testing.T) {
	rdb := client(t, testenv.Redis(t))
	s := dataversion.NewRedis(rdb, fixedDatabase(4), dataversion.Options{PollInterval: 20 * time.Millisecond, ReconcileEvery: 1000})
	run(t, s)
	waitFor(t, s, 4, true, 5*time.Second)
	s.Observe(6)
	if v, ok := s.Current(); !ok || v != 6 {
		t.Fatalf("after Observe(6): %d, %v", v, ok)
	}
	if err := rdb.Set(context.Background(), dataversion.Key, 2, 0).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // ten polls
	if v, ok := s.Current(); !ok || v != 6 {
		t.Errorf("after Redis went back to 2: %d, %v; want 6", v, ok)
	}
}

func TestPublishNeverLowers(t *testing.T) {
	rdb := client(t, testenv.Redis(t))
	ctx := context.Background()
	for _, c := range []struct{ publish, held int64 }{{5, 5}, {3, 5}, {6, 6}} {
		if held, err := dataversion.Publish(ctx, rdb, c.publish); err != nil || held != c.held {
			t.Errorf("Publish(%d) = %d, %v; want %d", c.publish, held, err, c.held)
		}
	}
}

// TestDatabaseSource: without Redis the database is polled, and a failed
// read makes the version unknown.
func TestDatabaseSource(t *testing.T) {
	var v atomic.Int64
	var failing atomic.Bool
	s := dataversion.NewDatabase(func(context.Context) (int64, error) {
		if failing.Load() {
			return 0, errors.New("database down")
		}
		return v.Load(), nil
	}, dataversion.Options{PollInterval: 20 * time.Millisecond})
	if _, ok := s.Current(); ok {
		t.Fatal("a source that never read reports a version")
	}
	run(t, s)
	waitFor(t, s, 0, true, 2*time.Second)
	v.Store(4)
	waitFor(t, s, 4, true, 2*time.Second)
	failing.Store(true)
	waitFor(t, s, 0, false, 2*time.Second)
	failing.Store(false)
	waitFor(t, s, 4, true, 2*time.Second)
}
