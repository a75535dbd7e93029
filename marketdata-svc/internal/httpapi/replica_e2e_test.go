package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/replicas"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// The end-to-end suites with the reads on a real streaming replica of the
// test PostgreSQL (testenv.StartReplica), routed by a replicas.Router
// under the cache as in serve.

// startReplicas routes reads to the binary's replica, keeps checking it
// until the test ends, and returns once it has replayed the seed.
func startReplicas(t *testing.T, cfg config.Config, store *testenv.Stores, versions *dataversion.Source, log *slog.Logger) (*replicas.Router, *testenv.Replica) {
	t.Helper()
	replica := testenv.StartReplica(t)
	cfg.DatabaseReplicaURLs = []string{replica.URL(cfg.DatabaseURL)}
	router, err := replicas.Open(cfg, replicas.Node{Database: store.Store, Reads: store.Reads}, nil, replicas.Options{Version: versions.Current, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Close() })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); router.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	if w, err := router.WaitReplayed(context.Background(), time.Minute); err != nil || len(w.Lagging) > 0 {
		t.Fatalf("replica did not replay the seed: %+v, %v", w, err)
	}
	waitUsable(t, router, 1)
	return router, replica
}

// waitUsable waits until n replicas are usable and returns how long that
// took; the test fails after a minute.
func waitUsable(t *testing.T, router *replicas.Router, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for router.Stats().Usable != n {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d usable replicas after a minute, want %d: %+v", router.Stats().Usable, n, router.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

func replicaE2E(t *testing.T, seedWith func(*testing.T, *testenv.Stores)) *e2e {
	t.Helper()
	return newE2EWith(t, e2eOptions{seed: seedWith, replica: true})
}

// checkReplicaServed holds that the replica answered the suite's reads.
func checkReplicaServed(t *testing.T, e *e2e) {
	t.Helper()
	st := e.router.Stats()
	t.Logf("reads: %+v", st)
	if st.ReplicaReads == 0 || st.Fallbacks != 0 {
		t.Errorf("the replica did not serve the suite: %+v", st)
	}
}

func TestEndToEndOnReplica(t *testing.T) {
	e := replicaE2E(t, seed)
	testEndToEnd(t, e)
	checkReplicaServed(t, e)
}

func TestIntradayEndToEndOnReplica(t *testing.T) {
	e := replicaE2E(t, func(t *testing.T, store *testenv.Stores) {
		if _, err := demo.Load(context.Background(), store.Ingest); err != nil {
			t.Fatalf("load demo: %v", err)
		}
	})
	testIntradayEndToEnd(t, e)
	checkReplicaServed(t, e)
}

// replicaWaitBound is the import's wait for replay in these tests (the
// service's default, MARKETDATA_DATABASE_REPLICA_WAIT, is 10 s).
const replicaWaitBound = time.Second

// importAndPublish applies one MSFT bar on the primary and publishes its
// version as the import command does: after waiting, at most
// replicaWaitBound, for the replica to replay the commit.
func importAndPublish(t *testing.T, e *e2e, date string, close float64) (int64, replicas.ReplayWait) {
	t.Helper()
	res, err := e.store.Ingest.Apply(context.Background(), ingest.Load{Bars: ingest.Bars([]ingest.BarRow{
		{Symbol: "MSFT", Date: day(date), Open: close, High: close, Low: close, Close: close, Volume: 1000}})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.router.WaitReplayed(context.Background(), replicaWaitBound)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataversion.Publish(context.Background(), e.rdb, res.Version); err != nil {
		t.Fatal(err)
	}
	for { // the server learns the version within its poll interval
		if v, _ := e.versions.Current(); v >= res.Version {
			return res.Version, w
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// latestMSFT reads MSFT's latest bar with a query of its own (limit), so
// that it misses the cache and reaches the store.
func latestMSFT(t *testing.T, e *e2e, limit int) eodRec {
	t.Helper()
	p := decode[page[[]eodRec]](t, e.get(t, "/v1/eod/latest", vals("symbols", "MSFT", "limit", fmt.Sprint(limit))))
	if len(p.Data) != 1 {
		t.Fatalf("latest: %+v", p)
	}
	return p.Data[0]
}

// An import while the replica's replay is paused: the import's wait ends
// at its bound with the replica lagging; under the new version every read
// skips the replica and answers the new rows from the primary (no time
// travel); after resume the replica is used again.
func TestReplicaImportWhileReplayPaused(t *testing.T) {
	e := replicaE2E(t, seed)
	if b := latestMSFT(t, e, 1); b.Date[:10] != "2003-06-20" {
		t.Fatalf("before: %+v", b)
	}
	// A caught-up replica: the wait ends once it has replayed.
	_, w := importAndPublish(t, e, "2003-06-23", 25.78)
	if len(w.Lagging) != 0 {
		t.Fatalf("wait on a streaming replica: %+v", w)
	}
	t.Logf("import replayed by the replica within %s (LSN %s)", w.Elapsed.Round(time.Millisecond), w.LSN)
	waitUsable(t, e.router, 1)

	resume := e.replica.PauseReplay(t)
	version, w := importAndPublish(t, e, "2003-06-24", 25.50)
	if len(w.Lagging) != 1 || w.Elapsed < replicaWaitBound {
		t.Fatalf("wait on a paused replica: %+v", w)
	}
	t.Logf("import %d published after the bound, %s, replica lagging", version, w.Elapsed.Round(time.Millisecond))
	before := e.router.Stats()
	for i := range 20 {
		if b := latestMSFT(t, e, 2+i); b.Date[:10] != "2003-06-24" || b.Close != 25.50 {
			t.Fatalf("time travel: version %d served %s %v", version, b.Date, b.Close)
		}
	}
	during := e.router.Stats()
	if during.Usable != 0 || during.ReplicaReads != before.ReplicaReads || during.PrimaryReads < before.PrimaryReads+20 {
		t.Errorf("reads during the lag: %+v then %+v", before, during)
	}

	resumed := time.Now()
	resume()
	waitUsable(t, e.router, 1)
	t.Logf("replica serving again %s after resume", time.Since(resumed).Round(time.Millisecond))
	if b := latestMSFT(t, e, 100); b.Date[:10] != "2003-06-24" {
		t.Errorf("after resume: %+v", b)
	}
	if after := e.router.Stats(); after.ReplicaReads != during.ReplicaReads+1 {
		t.Errorf("replica not used after resume: %+v", after)
	}
}

// A replica killed under load: every request still answers 200 from the
// primary, and the replica serves again once it is back.
func TestReplicaDownMidLoad(t *testing.T) {
	e := replicaE2E(t, seed)
	var done, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// A query of its own (date_from) each time, so that every
				// request misses the cache and reaches the store.
				from := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*workers+w)
				req := httptest.NewRequest(http.MethodGet, "/v1/eod?access_key="+e.key+"&symbols=GOOG&date_from="+from.Format(time.DateOnly), nil)
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, req)
				var p page[[]eodRec]
				if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Pagination.Total != 5 {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s", rec.Code, rec.Body))
				}
				done.Add(1)
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	waitFor := func(n int64) {
		t.Helper()
		start := time.Now()
		for done.Load() < n {
			if time.Since(start) > time.Minute {
				t.Fatalf("%d requests after a minute, want %d", done.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}

	waitFor(200)
	beforeOutage := e.router.Stats()
	killed := time.Now()
	start := e.replica.Stop(t)
	stopTook := time.Since(killed)
	outageStart := done.Load()
	waitFor(outageStart + 300)
	down := e.router.Stats()
	restart := time.Now()
	start()
	startTook := time.Since(restart)
	back := waitUsable(t, e.router, 1)
	outage := done.Load() - outageStart
	recovered := e.router.Stats()
	waitFor(done.Load() + 200)
	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // for the deferred close

	after := e.router.Stats()
	t.Logf("requests: %d, during the outage: %d, failed: %d; reads %+v before, %+v down, %+v after; kill took %s, restart %s, replica usable %s after its restart",
		done.Load(), outage, failed.Load(), beforeOutage, down, after, stopTook.Round(time.Millisecond), startTook.Round(time.Millisecond), back.Round(time.Millisecond))
	if failed.Load() != 0 {
		t.Errorf("%d requests failed, first: %v", failed.Load(), firstFailure.Load())
	}
	if beforeOutage.ReplicaReads == 0 || down.Usable != 0 || down.PrimaryReads <= beforeOutage.PrimaryReads {
		t.Errorf("reads did not move from the replica to the primary: %+v then %+v", beforeOutage, down)
	}
	if after.ReplicaReads <= recovered.ReplicaReads {
		t.Errorf("replica not used again after its restart: %+v then %+v", recovered, after)
	}
}
