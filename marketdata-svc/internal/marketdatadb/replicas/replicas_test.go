package replicas_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/replicas"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// replicaSetup is the stores of a fresh database, a Router over its reads
// and the binary's streaming replica, and the data version in force as
// the caches would see it (set by the test, as a publish would).
type replicaSetup struct {
	primary *testenv.Stores
	router  *replicas.Router
	replica *testenv.Replica
	inForce atomic.Int64
}

func newReplicaSetup(t *testing.T) *replicaSetup {
	t.Helper()
	return newReplicaSetupOf(t, func(primaryURL string, r *testenv.Replica) []string { return []string{r.URL(primaryURL)} })
}

// newReplicaSetupOf is newReplicaSetup with the replica URLs that urls
// returns, from the primary's URL and the streaming replica.
func newReplicaSetupOf(t *testing.T, urls func(primaryURL string, r *testenv.Replica) []string) *replicaSetup {
	t.Helper()
	url := testenv.Postgres(t)
	s := &replicaSetup{primary: testenv.StoreAt(t, url), replica: testenv.StartReplica(t)}
	cfg := testenv.Config(url)
	cfg.DatabaseReplicaURLs = urls(url, s.replica)
	r, err := replicas.Open(cfg, replicas.Node{Database: s.primary.Store, Reads: s.primary.Reads}, nil, replicas.Options{
		Version: func() (int64, bool) { return s.inForce.Load(), true }, CheckInterval: 200 * time.Millisecond, LagInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s.router = r
	return s
}

// load applies one GOOG bar of day and publishes its version once the
// replica has replayed it or bound has passed, as the import command does.
func (s *replicaSetup) load(t *testing.T, day string, close float64, bound time.Duration) replicas.ReplayWait {
	t.Helper()
	v := s.commit(t, day, close)
	w, err := s.router.WaitReplayed(context.Background(), bound)
	if err != nil {
		t.Fatal(err)
	}
	s.inForce.Store(v)
	return w
}

// commit applies one GOOG bar of day and returns its data version, not
// yet published.
func (s *replicaSetup) commit(t *testing.T, day string, close float64) int64 {
	t.Helper()
	d, _ := time.Parse(time.DateOnly, day)
	res, err := s.primary.Ingest.Apply(context.Background(), ingest.Load{
		Tickers: []ingest.TickerRow{{Symbol: "GOOG", Name: "Alphabet", AssetType: "Stock", PriceCurrency: "USD"}},
		Bars:    ingest.Bars([]ingest.BarRow{{Symbol: "GOOG", Date: d, Open: close, High: close, Low: close, Close: close, Volume: 1}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

// run keeps the replicas' checks running until the test ends.
func (s *replicaSetup) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.router.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func (s *replicaSetup) latest(t *testing.T) marketdata.Bar {
	t.Helper()
	p, err := s.router.EOD(context.Background(), marketdata.EODQuery{Symbols: []string{"GOOG"}, Latest: true})
	if err != nil || len(p.Bars) != 1 {
		t.Fatalf("latest: %+v, %v", p, err)
	}
	return p.Bars[0]
}

// waitUsable runs the checks until n replicas are usable; the test fails
// after 30 s.
func (s *replicaSetup) waitUsable(t *testing.T, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for s.router.Stats().Usable != n {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d usable replicas after 30 s, want %d: %+v", s.router.Stats().Usable, n, s.router.Stats())
		}
		s.router.Check(context.Background())
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func TestReplicasRouteReadsToACaughtUpReplica(t *testing.T) {
	s := newReplicaSetup(t)
	if w := s.load(t, "2008-10-14", 362.71, 30*time.Second); len(w.Lagging) != 0 {
		t.Fatalf("replica did not replay the load: %+v", w)
	}
	s.waitUsable(t, 1)
	if b := s.latest(t); b.Close != 362.71 {
		t.Errorf("latest %+v", b)
	}
	if _, err := s.router.Ticker(context.Background(), "NOPE"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Errorf("unknown ticker: %v", err)
	}
	if _, err := s.router.Tickers(context.Background(), marketdata.TickerQuery{Search: "alpha", Limit: 10}); err != nil {
		t.Error(err)
	}
	st := s.router.Stats()
	if st.ReplicaReads != 3 || st.PrimaryReads != 0 || st.Fallbacks != 0 {
		t.Errorf("reads not all on the replica (a not-found is an answer): %+v", st)
	}
}

// An import while the replica's replay is paused: the wait for the replica
// ends at its bound with the replica reported lagging, and reads under the
// new version skip it, so they never see the old rows; after resume it
// serves again, with the new rows.
func TestReplicasSkipAReplicaBehindTheVersionInForce(t *testing.T) {
	s := newReplicaSetup(t)
	s.load(t, "2008-10-13", 381.02, 30*time.Second)
	s.waitUsable(t, 1)
	resume := s.replica.PauseReplay(t)
	const bound = 300 * time.Millisecond
	w := s.load(t, "2008-10-14", 362.71, bound)
	if len(w.Lagging) != 1 || w.Elapsed < bound {
		t.Fatalf("wait on a paused replica: %+v", w)
	}
	s.router.Check(context.Background())
	before := s.router.Stats()
	for range 5 {
		if b := s.latest(t); b.Close != 362.71 {
			t.Fatalf("time travel: the new version served the old latest bar %+v", b)
		}
	}
	st := s.router.Stats()
	if st.Usable != 0 || st.PrimaryReads-before.PrimaryReads != 5 || st.ReplicaReads != before.ReplicaReads {
		t.Errorf("reads while the replica lags: %+v then %+v", before, st)
	}
	resume()
	catchUp := s.waitUsable(t, 1)
	t.Logf("replica usable again %s after resume", catchUp)
	if b := s.latest(t); b.Close != 362.71 || s.router.Stats().ReplicaReads != st.ReplicaReads+1 {
		t.Errorf("after resume: %+v, %+v", b, s.router.Stats())
	}
}

// A replica that goes down: reads fail over to the primary without an
// error, the replica is marked down, and used again once it is back.
func TestReplicasFallBackToThePrimaryWhenAReplicaDies(t *testing.T) {
	s := newReplicaSetup(t)
	s.load(t, "2008-10-14", 362.71, 30*time.Second)
	s.waitUsable(t, 1)
	s.latest(t) // a pooled connection to the replica, which the kill breaks
	start := s.replica.Stop(t)
	for range 5 {
		if b := s.latest(t); b.Close != 362.71 {
			t.Fatalf("latest during the outage %+v", b)
		}
	}
	st := s.router.Stats()
	if st.Usable != 0 || st.Fallbacks < 1 {
		t.Errorf("the dead replica is not marked down after a failed read: %+v", st)
	}
	start()
	s.waitUsable(t, 1)
	before := s.router.Stats().ReplicaReads
	s.latest(t)
	if s.router.Stats().ReplicaReads != before+1 {
		t.Errorf("replica not used again: %+v", s.router.Stats())
	}
}

// A replica frozen (SIGSTOP) under concurrent reads: every read is
// answered without error, from the primary once the replica's own short
// deadline has passed, so none waits for the request's deadline; and the
// frozen replica leaves the rotation, so reads after the first ones do
// not pay that deadline again.
func TestReplicasFailFastOnAFrozenReplica(t *testing.T) {
	s := newReplicaSetup(t)
	s.load(t, "2008-10-14", 362.71, 30*time.Second)
	s.waitUsable(t, 1)
	s.run(t)
	// The request deadline, as the API's (10 s by default) would be.
	const requestTimeout = 5 * time.Second
	// A read may pay the replica's deadline once, then the primary's
	// answer: generous against a loaded machine, well under the request's.
	const bound = 2500 * time.Millisecond
	var reads, failed, slow atomic.Int64
	var worst atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for range 24 {
		wg.Go(func() {
			for !stopped.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				start := time.Now()
				p, err := s.router.EOD(ctx, marketdata.EODQuery{Symbols: []string{"GOOG"}, Latest: true})
				took := time.Since(start)
				cancel()
				reads.Add(1)
				for w := worst.Load(); int64(took) > w && !worst.CompareAndSwap(w, int64(took)); w = worst.Load() {
				}
				if err != nil || len(p.Bars) != 1 {
					failed.Add(1)
				} else if took > bound {
					slow.Add(1)
				}
			}
		})
	}
	for s.router.Stats().ReplicaReads < 50 {
		time.Sleep(time.Millisecond)
	}
	thaw := s.replica.Freeze(t)
	time.Sleep(2 * requestTimeout)
	stopped.Store(true)
	wg.Wait()
	thaw()
	st := s.router.Stats()
	t.Logf("%d reads, %d failed, %d over %s, slowest %s; %+v", reads.Load(), failed.Load(), slow.Load(), bound, time.Duration(worst.Load()), st)
	if failed.Load() > 0 || slow.Load() > 0 {
		t.Errorf("a frozen replica: %d of %d reads failed, %d took over %s (slowest %s)", failed.Load(), reads.Load(), slow.Load(), bound, time.Duration(worst.Load()))
	}
	if st.Usable != 0 {
		t.Errorf("the frozen replica is still in rotation: %+v", st)
	}
	// Only the reads in flight when it froze paid its deadline.
	if st.Fallbacks > 24 {
		t.Errorf("%d reads fell back from the frozen replica: it was not taken out of rotation after the first", st.Fallbacks)
	}
	s.waitUsable(t, 1)
}

// Two replicas replaying at different speeds (here the primary itself,
// always caught up, and the streaming replica with its replay paused)
// while an import waits for them before it publishes its version: once a
// read has answered with the new rows, no later read answers with the
// old ones, although the version in force is still the old one.
func TestReplicasNeverGoBackAVersion(t *testing.T) {
	s := newReplicaSetupOf(t, func(primaryURL string, r *testenv.Replica) []string {
		return []string{primaryURL, r.URL(primaryURL)}
	})
	// The primary replays nothing, so the wait for it runs to its bound;
	// the checks find both serving the version.
	s.load(t, "2008-10-13", 381.02, 100*time.Millisecond)
	s.waitUsable(t, 2)
	s.run(t)
	resume := s.replica.PauseReplay(t)
	s.commit(t, "2008-10-14", 362.71) // not published: the import waits
	var newSeen atomic.Bool
	var reads, news, back atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Second)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				after := newSeen.Load()
				p, err := s.router.EOD(context.Background(), marketdata.EODQuery{Symbols: []string{"GOOG"}, Latest: true})
				if err != nil || len(p.Bars) != 1 {
					t.Errorf("latest: %+v, %v", p, err)
					return
				}
				reads.Add(1)
				switch {
				case p.Bars[0].Close == 362.71:
					news.Add(1)
					newSeen.Store(true)
				case after:
					back.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d reads, %d new, %d old after a new one; %+v", reads.Load(), news.Load(), back.Load(), s.router.Stats())
	if news.Load() == 0 {
		t.Fatal("no read saw the committed rows")
	}
	if back.Load() > 0 {
		t.Errorf("time travel: %d of %d reads answered the old rows after one had answered the new", back.Load(), reads.Load())
	}
	resume()
}
