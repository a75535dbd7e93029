package marketdatadb_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// replicaSetup is a store on a fresh database, Replicas over it and the
// binary's streaming replica, and the data version in force as the
// caches would see it (set by the test, as a publish would).
type replicaSetup struct {
	primary  *marketdatadb.Store
	replicas *marketdatadb.Replicas
	replica  *testenv.Replica
	inForce  atomic.Int64
}

func newReplicaSetup(t *testing.T) *replicaSetup {
	t.Helper()
	url := testenv.Postgres(t)
	s := &replicaSetup{primary: testenv.StoreAt(t, url), replica: testenv.StartReplica(t)}
	cfg := testConfig(url)
	cfg.DatabaseReplicaURLs = []string{s.replica.URL(url)}
	r, err := marketdatadb.OpenReplicas(cfg, s.primary, nil, marketdatadb.ReplicaOptions{
		Version: func() (int64, bool) { return s.inForce.Load(), true }, CheckInterval: 200 * time.Millisecond, LagInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s.replicas = r
	return s
}

// load applies one GOOG bar of day and publishes its version once the
// replica has replayed it or bound has passed, as the import command does.
func (s *replicaSetup) load(t *testing.T, day string, close float64, bound time.Duration) marketdatadb.ReplayWait {
	t.Helper()
	d, _ := time.Parse(time.DateOnly, day)
	res, err := s.primary.Apply(context.Background(), marketdatadb.Load{
		Tickers: []marketdatadb.TickerRow{{Symbol: "GOOG", Name: "Alphabet", AssetType: "Stock", PriceCurrency: "USD"}},
		Bars:    marketdatadb.Bars([]marketdatadb.BarRow{{Symbol: "GOOG", Date: d, Open: close, High: close, Low: close, Close: close, Volume: 1}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.replicas.WaitReplayed(context.Background(), bound)
	if err != nil {
		t.Fatal(err)
	}
	s.inForce.Store(res.Version)
	return w
}

func (s *replicaSetup) latest(t *testing.T) marketdata.Bar {
	t.Helper()
	p, err := s.replicas.EOD(context.Background(), marketdata.EODQuery{Symbols: []string{"GOOG"}, Latest: true})
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
	for s.replicas.Stats().Usable != n {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d usable replicas after 30 s, want %d: %+v", s.replicas.Stats().Usable, n, s.replicas.Stats())
		}
		s.replicas.Check(context.Background())
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
	if _, err := s.replicas.Ticker(context.Background(), "NOPE"); !errors.Is(err, marketdata.ErrNotFound) {
		t.Errorf("unknown ticker: %v", err)
	}
	if _, err := s.replicas.Tickers(context.Background(), marketdata.TickerQuery{Search: "alpha", Limit: 10}); err != nil {
		t.Error(err)
	}
	st := s.replicas.Stats()
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
	s.replica.PauseReplay(t)
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			s.replica.ResumeReplay(t)
		}
	})
	const bound = 300 * time.Millisecond
	w := s.load(t, "2008-10-14", 362.71, bound)
	if len(w.Lagging) != 1 || w.Elapsed < bound {
		t.Fatalf("wait on a paused replica: %+v", w)
	}
	s.replicas.Check(context.Background())
	before := s.replicas.Stats()
	for range 5 {
		if b := s.latest(t); b.Close != 362.71 {
			t.Fatalf("time travel: the new version served the old latest bar %+v", b)
		}
	}
	st := s.replicas.Stats()
	if st.Usable != 0 || st.PrimaryReads-before.PrimaryReads != 5 || st.ReplicaReads != before.ReplicaReads {
		t.Errorf("reads while the replica lags: %+v then %+v", before, st)
	}
	s.replica.ResumeReplay(t)
	resumed = true
	catchUp := s.waitUsable(t, 1)
	t.Logf("replica usable again %s after resume", catchUp)
	if b := s.latest(t); b.Close != 362.71 || s.replicas.Stats().ReplicaReads != st.ReplicaReads+1 {
		t.Errorf("after resume: %+v, %+v", b, s.replicas.Stats())
	}
}

// A replica that goes down: reads fail over to the primary without an
// error, the replica is marked down, and used again once it is back.
func TestReplicasFallBackToThePrimaryWhenAReplicaDies(t *testing.T) {
	s := newReplicaSetup(t)
	s.load(t, "2008-10-14", 362.71, 30*time.Second)
	s.waitUsable(t, 1)
	s.latest(t) // a pooled connection to the replica, which the kill breaks
	s.replica.Stop(t)
	started := false
	t.Cleanup(func() {
		if !started {
			s.replica.Start(t)
		}
	})
	for range 5 {
		if b := s.latest(t); b.Close != 362.71 {
			t.Fatalf("latest during the outage %+v", b)
		}
	}
	st := s.replicas.Stats()
	if st.Usable != 0 || st.Fallbacks < 1 {
		t.Errorf("the dead replica is not marked down after a failed read: %+v", st)
	}
	s.replica.Start(t)
	started = true
	s.waitUsable(t, 1)
	before := s.replicas.Stats().ReplicaReads
	s.latest(t)
	if s.replicas.Stats().ReplicaReads != before+1 {
		t.Errorf("replica not used again: %+v", s.replicas.Stats())
	}
}
