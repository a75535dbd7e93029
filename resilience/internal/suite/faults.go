package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
)

// marketQueries are the EOD and ticker reads the load cycles through, so
// most of them become cache hits.
var marketQueries = []string{
	"/v1/eod?symbols=GOOG,MSFT&limit=20",
	"/v1/eod?symbols=GOOG&limit=5&offset=10",
	"/v1/eod?symbols=GSPC.INDX,MSFT&date_to=2010-01-01&limit=10",
	"/v1/eod/latest?symbols=GOOG,MSFT",
	"/v1/eod?symbols=MSFT&date_from=2008-01-01&date_to=2008-12-31&limit=50",
}

// documentedError reports whether body is the service's documented error
// shape: problem+json for notes-svc, marketstack's {"error":{...}} for
// marketdata-svc.
func documentedError(svc string, status int, header http.Header, body []byte) bool {
	if svc == "notes-svc" {
		var p struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Status int    `json:"status"`
		}
		return header.Get("Content-Type") == "application/problem+json" &&
			json.Unmarshal(body, &p) == nil && p.Status == status && p.Title != ""
	}
	var m struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Context json.RawMessage `json:"context"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &m) == nil && m.Error.Code != "" && m.Error.Message != ""
}

// RedisOutage stops Redis under marketdata load and starts it again.
func RedisOutage(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Redis stopped mid-load, then restarted (marketdata-svc)")
	const rate, dur = 50, 9 * time.Second
	client := load.NewClient(RequestTimeout+2*time.Second, true)
	for _, q := range marketQueries { // warm the cache
		_, _ = e.Do(e.MarketRequest(http.MethodGet, q, e.MarketKey))
	}
	errorsBefore, _ := e.Metric(e.Market, "marketdata_cache_errors_total")
	fallbacksBefore, _ := e.Metric(e.Market, "marketdata_cache_fallbacks_total")
	hitsBefore, _ := e.Metric(e.Market, "marketdata_cache_hits_total")
	redis := startOutage(ctx, e.Stack.StopRedis, e.Stack.StartRedis, 3*time.Second)
	results := load.Run(ctx, load.Plan{Rate: rate, Duration: dur, Client: client, Build: func(i int) (*http.Request, error) {
		return e.MarketRequest(http.MethodGet, marketQueries[i%len(marketQueries)], e.MarketKey), nil
	}})
	redis.wait()
	sum := load.Summarize(results)
	s.Sent, s.Outcomes = sum.Sent, sum.StatusString()
	s.Failed = sum.Sent - sum.ByStatus[200]
	duringOutage := 0
	for _, r := range results {
		if r.Start.After(redis.down) && r.Start.Before(redis.up) {
			duringOutage++
		}
	}
	redis.check(s, "Redis")
	s.Check("every request answered 200", s.Failed == 0, "%d of %d failed (%d sent while Redis was down); %s", s.Failed, s.Sent, duringOutage, s.Outcomes)
	s.Check("latency stays within the request timeout", sum.MaxLatency < RequestTimeout, "p99 %s, max %s", sum.P99Latency.Round(time.Millisecond), sum.MaxLatency.Round(time.Millisecond))
	errorsAfter, err1 := e.Metric(e.Market, "marketdata_cache_errors_total")
	fallbacksAfter, err2 := e.Metric(e.Market, "marketdata_cache_fallbacks_total")
	hitsAfter, err3 := e.Metric(e.Market, "marketdata_cache_hits_total")
	// With Redis gone the data version is read from the database
	// (internal/dataversion), so the in-process cache keeps answering the
	// pages it holds at that version; what it does not hold goes to the
	// database after a failed (or bypassed) Redis call. Every request
	// answered during the outage is one or the other, and the metrics
	// must say which.
	s.Check("metrics show how the outage was served", err1 == nil && err2 == nil && err3 == nil &&
		(hitsAfter-hitsBefore)+(fallbacksAfter-fallbacksBefore) >= float64(duringOutage),
		"in-process cache hits +%.0f, fallbacks to the database +%.0f, cache errors +%.0f, for %d requests sent during the outage (%v %v %v)",
		hitsAfter-hitsBefore, fallbacksAfter-fallbacksBefore, errorsAfter-errorsBefore, duringOutage, err1, err2, err3)

	// The cache comes back by itself: after the bypass period, repeated
	// queries are hits again. Redis lost its data, so the first round
	// misses and fills it.
	recovered := time.Duration(-1)
	var hitsGained float64
	for time.Since(redis.up) < 10*time.Second {
		h0, err := e.Metric(e.Market, "marketdata_cache_hits_total")
		if err != nil {
			break
		}
		for _, q := range marketQueries {
			_, _ = e.Do(e.MarketRequest(http.MethodGet, q, e.MarketKey))
		}
		h1, _ := e.Metric(e.Market, "marketdata_cache_hits_total")
		if h1 > h0 {
			recovered, hitsGained = time.Since(redis.up), h1-h0
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if recovered >= 0 {
		s.Recovery = fmt.Sprintf("cache hits resume %.1f s after Redis is back", recovered.Seconds())
	}
	s.Check("cache hits resume after Redis is back", recovered >= 0 && recovered <= 5*time.Second,
		"marketdata_cache_hits_total +%.0f, %s after restart", hitsGained, recovered.Round(10*time.Millisecond))
}

// probe is one periodic check of a service during an outage.
type probe struct {
	at     time.Time
	ready  int
	status int
}

// PostgresRestart stops PostgreSQL under load on both services and starts
// it again.
func PostgresRestart(ctx context.Context, e *Env, noteID string) {
	s := e.Report.Scenario("PostgreSQL restarted mid-load (both services)")
	const rate, dur = 40, 11 * time.Second
	client := load.NewClient(RequestTimeout+5*time.Second, true)
	notesReq := func(int) (*http.Request, error) {
		return e.NotesRequest(http.MethodGet, "/v1/notes/"+noteID, e.NotesKeyA, nil, nil), nil
	}
	// Distinct offsets make every market query a cache miss, so it
	// reaches the database.
	marketReq := func(i int) (*http.Request, error) {
		return e.MarketRequest(http.MethodGet, fmt.Sprintf("/v1/eod?symbols=GOOG,MSFT&limit=3&offset=%d", 2000+i), e.MarketKey), nil
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	probes := map[string]*[]probe{"notes-svc": {}, "marketdata-svc": {}}
	var pwg sync.WaitGroup
	var seq sync.Mutex
	n := 0
	for _, svc := range []*harness.Service{e.Notes, e.Market} {
		list := probes[svc.Name]
		build := notesReq
		if svc == e.Market {
			build = func(int) (*http.Request, error) {
				seq.Lock()
				n++
				k := n
				seq.Unlock()
				return marketReq(100000 + k)
			}
		}
		pwg.Go(func() {
			pc := load.NewClient(RequestTimeout+2*time.Second, true)
			for probeCtx.Err() == nil {
				p := probe{at: time.Now(), ready: e.Ready(svc)}
				p.status = load.Do(pc, 0, build).Status
				*list = append(*list, p)
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	pg := startOutage(ctx, e.Stack.StopPostgres, e.Stack.StartPostgres, 4*time.Second)
	var notesRes, marketRes []load.Result
	var lwg sync.WaitGroup
	lwg.Go(func() {
		notesRes = load.Run(ctx, load.Plan{Rate: rate, Duration: dur, Client: client, Build: notesReq})
	})
	lwg.Go(func() {
		marketRes = load.Run(ctx, load.Plan{Rate: rate, Duration: dur, Client: client, Build: marketReq})
	})
	lwg.Wait()
	pg.wait()
	time.Sleep(500 * time.Millisecond)
	stopProbe()
	pwg.Wait()
	pg.check(s, "PostgreSQL")

	var recoveries []string
	for _, part := range []struct {
		svc     string
		results []load.Result
	}{{"notes-svc", notesRes}, {"marketdata-svc", marketRes}} {
		sum := load.Summarize(part.results)
		s.Sent += sum.Sent
		bad, slow, fiveHundred := 0, 0, 0
		var example string
		for _, r := range part.results {
			ok := r.Err == nil && (r.Status == 200 ||
				((r.Status == 503 || r.Status == 500) && documentedError(part.svc, r.Status, r.Header, r.Body)))
			if r.Status == 500 {
				fiveHundred++
			}
			if r.Duration() > RequestTimeout+time.Second {
				slow++
				ok = false
			}
			if !ok {
				bad++
				if example == "" {
					example = fmt.Sprintf("status %d err %v body %.200s", r.Status, r.Err, r.Body)
				}
			}
		}
		s.Failed += bad
		if s.Outcomes != "" {
			s.Outcomes += "; "
		}
		s.Outcomes += part.svc + ": " + sum.StatusString()
		s.Check(part.svc+": every answer is 200 or the documented 503/500 error", bad == 0, "%d unexpected (%s)", bad, example)
		s.Check(part.svc+": no request outlives the request timeout", slow == 0, "%d requests took longer than %s + 1 s; max %s",
			slow, RequestTimeout, sum.MaxLatency.Round(time.Millisecond))
		if fiveHundred > 0 {
			s.Note("%s answered %d requests with 500 during the outage; 503 would tell clients to retry", part.svc, fiveHundred)
		}
		// Readiness while down, and recovery after.
		list := *probes[part.svc]
		sawNotReady := false
		for _, p := range list {
			if p.at.After(pg.down) && p.at.Before(pg.up) && p.ready == 503 {
				sawNotReady = true
			}
		}
		s.Check(part.svc+": /readyz reports 503 while the database is down", sawNotReady, "probed %d times", len(list))
		recovered := time.Duration(-1)
		for _, p := range list {
			if !p.at.Before(pg.up) && p.ready == 200 && p.status == 200 {
				recovered = p.at.Sub(pg.up)
				break
			}
		}
		s.Check(part.svc+": recovers within 5 s of the database coming back", recovered >= 0 && recovered <= 5*time.Second,
			"first ready probe and successful DB-backed request %s after PostgreSQL accepted connections", recovered.Round(time.Millisecond))
		recoveries = append(recoveries, fmt.Sprintf("%s %.2f s", part.svc, recovered.Seconds()))
		s.Check(part.svc+": still running (no crash)", svcByName(e, part.svc).Alive(), "process alive after the outage")
	}
	s.Recovery = strings.Join(recoveries, ", ")
}

// outage takes a dependency away 2 s into a scenario's load and brings it
// back a while later, recording when, so that the scenario can tell the
// requests sent while it was gone.
type outage struct {
	down, up          time.Time
	stopErr, startErr error
	wg                sync.WaitGroup
}

// startOutage starts an outage of downFor in the background.
func startOutage(ctx context.Context, stop, start func(context.Context) error, downFor time.Duration) *outage {
	o := &outage{}
	o.wg.Go(func() {
		time.Sleep(2 * time.Second)
		o.down = time.Now()
		o.stopErr = stop(ctx)
		time.Sleep(downFor)
		o.startErr = start(ctx)
		o.up = time.Now()
	})
	return o
}

// wait returns once the dependency is back.
func (o *outage) wait() { o.wg.Wait() }

// check records, after wait, whether what was stopped and started again.
func (o *outage) check(s *report.Scenario, what string) {
	s.Check(what+" stopped and restarted", o.stopErr == nil && o.startErr == nil, "stop: %v, start: %v, down for %s",
		o.stopErr, o.startErr, o.up.Sub(o.down).Round(10*time.Millisecond))
}

func svcByName(e *Env, name string) *harness.Service {
	if name == e.Notes.Name {
		return e.Notes
	}
	return e.Market
}

// Sigterm sends SIGTERM to svc under load and checks every request
// accepted before the listener closed completed.
//
// Just before the signal, lockTable in db is locked for 1.8 s, so that
// requests are still waiting on the database when the drain delay ends and
// the server starts shutting down: those in-flight requests must complete.
func Sigterm(ctx context.Context, e *Env, svc *harness.Service, db, lockTable string, build func(i int) (*http.Request, error)) {
	s := e.Report.Scenario("SIGTERM mid-load (" + svc.Name + ")")
	const rate, dur = 80, 5 * time.Second
	// One connection per request, so that every request's fate is its
	// own: a refused connection was never accepted.
	client := load.NewClient(RequestTimeout+ShutdownTimeout, false)
	var sig time.Time
	var exited bool
	var exitErr error
	var exitAt time.Time
	var wg sync.WaitGroup
	var lockErr error
	wg.Go(func() {
		time.Sleep(1200 * time.Millisecond)
		var lock *exec.Cmd
		lock, lockErr = e.Stack.HoldPSQL(ctx, db, fmt.Sprintf("BEGIN; LOCK TABLE %s IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(1.8); COMMIT;", lockTable))
		if lockErr == nil {
			lockErr = e.Stack.WaitLock(ctx, db, lockTable, "AccessExclusiveLock")
		}
		time.Sleep(300 * time.Millisecond)
		sig = time.Now()
		_ = svc.Signal(syscall.SIGTERM)
		if lock != nil {
			defer func() { _ = lock.Wait() }()
		}
		exited, exitAt, exitErr = svc.Wait(ShutdownDrain + ShutdownTimeout + 5*time.Second)
	})
	results := load.Run(ctx, load.Plan{Rate: rate, Duration: dur, Client: client, Build: build})
	wg.Wait()
	sum := load.Summarize(results)
	s.Sent, s.Outcomes = sum.Sent, sum.StatusString()
	// The server keeps accepting during the drain delay; requests sent in
	// its first half must be served too (the second half is a margin for
	// the listener closing at its end on a loaded machine).
	mustServe := sig.Add(ShutdownDrain / 2)
	before, accepted, notAccepted, failed := 0, 0, 0, 0
	var example string
	for _, r := range results {
		if r.Start.Before(sig) {
			before++
		}
		switch {
		case r.Err == nil && r.Status < 300:
			accepted++
		case r.Err == nil:
			failed++
			example = fmt.Sprintf(": status %d %.200s", r.Status, r.Body)
		case r.Start.Before(mustServe):
			failed++
			example = fmt.Sprintf(": started %s after SIGTERM: %v", r.Start.Sub(sig).Round(time.Millisecond), r.Err)
		default:
			// Sent in the drain delay's second half or later: refused, or
			// reset by the listener closing while it was still in the
			// accept queue. Never accepted by the server, so not an
			// in-flight request.
			notAccepted++
		}
	}
	// In flight when shutdown began: sent while the lock was held, early
	// enough that the server had surely accepted them, and still waiting
	// when the drain delay ended. A request sent in the last moments of the
	// drain can still sit in the kernel's accept queue when the listener
	// closes; the kernel resets it, and the server never saw it, so it is
	// not in flight (the CI run of 2026-11-26 counted one such request).
	shutdownAt := sig.Add(ShutdownDrain)
	inFlight, inFlightOK := 0, 0
	var inFlightExample string
	for _, r := range results {
		if r.Start.Before(mustServe) && r.End.After(shutdownAt) {
			inFlight++
			if r.Err == nil && r.Status < 300 {
				inFlightOK++
			} else {
				inFlightExample = fmt.Sprintf("; one sent %s after SIGTERM got status %d, error %v",
					r.Start.Sub(sig).Round(time.Millisecond), r.Status, r.Err)
			}
		}
	}
	if lockErr != nil {
		inFlightExample += fmt.Sprintf("; the lock was not taken: %v", lockErr)
	}
	s.Check("requests in flight when shutdown began completed", lockErr == nil && inFlight > 0 && inFlight == inFlightOK,
		"%d requests were waiting on a locked %s table when the drain delay ended and the server began shutting down; %d completed 2xx%s",
		inFlight, lockTable, inFlightOK, inFlightExample)
	s.Failed = failed
	s.Check("0 failed in-flight requests", failed == 0, "%d sent before SIGTERM, %d completed 2xx, %d sent in the drain delay's second half or later and not accepted (listener closed), %d failed%s",
		before, accepted, notAccepted, failed, example)
	grace := ShutdownDrain + ShutdownTimeout
	took := exitAt.Sub(sig)
	s.Check("exits within its grace period", exited && took <= grace+time.Second, "exited %v after %s (drain %s + timeout %s)", exited, took.Round(time.Millisecond), ShutdownDrain, ShutdownTimeout)
	s.Check("exit status 0", exited && exitErr == nil, "exit: %v", exitErr)
	s.Recovery = fmt.Sprintf("exit %.2f s after SIGTERM", took.Seconds())
	if err := svc.Start(ctx, nil); err != nil {
		e.Report.Error("restart %s after SIGTERM: %v", svc.Name, err)
	}
}

// SlowDatabase holds an exclusive lock on table while loading svc.
func SlowDatabase(ctx context.Context, e *Env, svc *harness.Service, db, table string, build func(i int) (*http.Request, error)) {
	s := e.Report.Scenario("Slow database: " + table + " locked (" + svc.Name + ")")
	const hold = 6 * time.Second
	lockCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, err := e.Stack.HoldPSQL(lockCtx, db, fmt.Sprintf("BEGIN; LOCK TABLE %s IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(%d); COMMIT;", table, int(hold.Seconds())))
	if err != nil {
		s.Check("lock taken", false, "%v", err)
		return
	}
	lockErr := e.Stack.WaitLock(ctx, db, table, "AccessExclusiveLock")
	if lockErr != nil {
		s.Check("lock taken", false, "ACCESS EXCLUSIVE on %s: %v", table, lockErr)
		return
	}
	s.Check("lock taken", true, "ACCESS EXCLUSIVE on %s held for %s", table, hold)
	lockedAt := time.Now()
	healthCtx, stopHealth := context.WithCancel(ctx)
	var health []load.Result
	var hwg sync.WaitGroup
	hwg.Go(func() {
		hc := load.NewClient(2*time.Second, true)
		for healthCtx.Err() == nil {
			health = append(health, load.Do(hc, 0, func(int) (*http.Request, error) { return http.NewRequest(http.MethodGet, svc.URL("/healthz"), nil) }))
			time.Sleep(100 * time.Millisecond)
		}
	})
	client := load.NewClient(RequestTimeout+5*time.Second, true)
	results := load.Run(ctx, load.Plan{Rate: 20, Duration: 3 * time.Second, Client: client, Build: build})
	stopHealth()
	hwg.Wait()
	sum := load.Summarize(results)
	s.Sent, s.Outcomes = sum.Sent, sum.StatusString()
	bad, slow := 0, 0
	var example string
	for _, r := range results {
		ok := r.Err == nil && (r.Status == 200 || (r.Status == 503 && documentedError(svc.Name, r.Status, r.Header, r.Body)))
		if r.Duration() > RequestTimeout+time.Second {
			slow++
			ok = false
		}
		if !ok {
			bad++
			example = fmt.Sprintf("status %d err %v after %s: %.200s", r.Status, r.Err, r.Duration().Round(time.Millisecond), r.Body)
		}
	}
	s.Failed = bad
	s.Check("requests end with the documented 503 at the configured timeout", bad == 0, "%d unexpected; statement timeout %s, request timeout %s; %s", bad, StatementTimeout, RequestTimeout, example)
	s.Check("nothing waits beyond the request timeout", slow == 0, "p99 %s, max %s (limit %s + 1 s)", sum.P99Latency.Round(time.Millisecond), sum.MaxLatency.Round(time.Millisecond), RequestTimeout)
	hs := load.Summarize(health)
	s.Check("/healthz stays up while the pool is exhausted", hs.ByStatus[200] == hs.Sent && hs.Sent > 0 && hs.MaxLatency < time.Second,
		"%d probes: %s, max %s", hs.Sent, hs.StatusString(), hs.MaxLatency.Round(time.Millisecond))
	_ = cmd.Wait()
	released := time.Now()
	recovered := time.Duration(-1)
	for time.Since(released) < 10*time.Second {
		if r := load.Do(client, 0, build); r.Status == 200 {
			recovered = time.Since(released)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Recovery = fmt.Sprintf("%.2f s after the lock is released (held %.1f s)", recovered.Seconds(), released.Sub(lockedAt).Seconds())
	s.Check("serves again once the lock is released", recovered >= 0 && recovered <= 5*time.Second, "%s", recovered.Round(time.Millisecond))
}
