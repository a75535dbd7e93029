package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
)

// The failover drill's cluster: Patroni's leader TTL, which bounds how long
// a frozen primary keeps its leadership (deploy/testimages/patroni).
const haTTL = 10 * time.Second

// haWriters write for haWriteFor, the drill's fixed load.
const (
	haWriters  = 8
	haWriteFor = 60 * time.Second
)

// haEvent is one fault of the drill and when it was done.
type haEvent struct {
	name string
	at   time.Time
	err  error
}

// haWrite is one write a drill writer sent, with its outcome.
type haWrite struct {
	start, end time.Time
	status     int // 0 when no answer came
}

// haNote is what a writer knows of one of its notes: the content the
// server acknowledged last, and the contents it sent after that without an
// answer (any of which the note may hold now).
type haNote struct {
	id, title, etag string
	acked           string
	pending         []string
}

// haRun is one drill against one cluster.
type haRun struct {
	e       *Env
	cluster *harness.HACluster
	notes   *harness.Service
	market  *harness.Service
	key     string
	mkey    string

	mu       sync.Mutex
	writes   []haWrite
	notesOf  map[string]*haNote // title -> note, every acknowledged create
	unknown  int                // keyless creates whose outcome is unknown
	refused  int                // writes answered 503
	retried  int                // keyed creates sent again after no answer or 503
	statuses map[int]int
	stopped  bool
}

// Failover is the store-of-record drill: the notes and marketdata services
// on a three-node synchronous Patroni cluster behind HAProxy, eight writers
// creating and updating notes with Idempotency-Keys for 60 s, and
// marketdata's cache hits and misses, while the primary is SIGKILLed, the
// next one is frozen past the leader TTL and let go, and a planned
// switchover runs. Every acknowledged write must read back, no note may be
// created twice, and each failover's window is measured. Then the mutation
// check: the same kill with synchronous_mode off and the standbys cut off
// must lose acknowledged writes, or the check proves
// nothing.
//
// The cluster's HAProxy listens on the suite's PostgreSQL port + 100.
func Failover(ctx context.Context, e *Env) {
	s := e.Report.Scenario("PostgreSQL failover: Patroni, synchronous replication, 8 writers for 60 s (notes-svc, marketdata-svc)")
	script, err := FailoverScript()
	if err != nil {
		s.Check("cluster script found", false, "%v", err)
		return
	}
	port := e.Stack.PGPort + 100
	r, err := startHARun(ctx, e, &harness.HACluster{Script: script, Prefix: "td-faults-ha", Port: port, Sync: true}, "failover")
	if err != nil {
		s.Check("cluster and services start", false, "%v", err)
		r.stop(ctx)
		return
	}
	defer r.stop(ctx)

	start := time.Now()
	var events []haEvent
	// The load runs haWriteFor, and on until 10 s after the last fault
	// when a slow machine makes the faults run late, so that every
	// failover's window closes under load.
	eventsDone := make(chan struct{})
	stopAt := start.Add(haWriteFor)
	go func() {
		defer close(eventsDone)
		events = r.faults(ctx, start)
		if late := time.Now().Add(10 * time.Second); late.After(stopAt) {
			stopAt = late
		}
	}()
	running := func() bool {
		if ctx.Err() != nil {
			return false
		}
		select {
		case <-eventsDone:
			return time.Now().Before(stopAt)
		default:
			return true
		}
	}
	var hits, misses []load.Result
	var lwg sync.WaitGroup
	client := load.NewClient(RequestTimeout+2*time.Second, true)
	// marketGets runs build at 20 requests a second, in 5 s rounds, while
	// the load runs.
	marketGets := func(build func(i int) string) []load.Result {
		var out []load.Result
		for n := 0; running(); n++ {
			out = append(out, load.Run(ctx, load.Plan{Rate: 20, Duration: 5 * time.Second, Client: client, Build: func(i int) (*http.Request, error) {
				return r.marketGet(build(n*100 + i)), nil
			}})...)
		}
		return out
	}
	lwg.Go(func() { hits = marketGets(func(int) string { return "/v1/eod?symbols=GOOG,MSFT&limit=5" }) })
	lwg.Go(func() {
		misses = marketGets(func(i int) string { return fmt.Sprintf("/v1/eod?symbols=GOOG,MSFT&limit=2&offset=%d", 20000+i) })
	})
	r.write(ctx, haWriters, running, true)
	<-eventsDone
	lwg.Wait()

	for _, ev := range events {
		s.Check(ev.name+": done", ev.err == nil, "%v", ev.err)
		s.Note("%s at +%.1f s", ev.name, ev.at.Sub(start).Seconds())
	}
	if len(failed(misses)) > 0 {
		fm := failed(misses)
		s.Note("marketdata misses failed from +%.1f s to +%.1f s", fm[0].Start.Sub(start).Seconds(), fm[len(fm)-1].Start.Sub(start).Seconds())
	}
	// A node whose rewind failed is cloned again from the leader, which
	// takes a minute or more on a loaded machine: the cluster is given
	// three to heal before split brain is judged.
	healthy := r.cluster.WaitHealthy(ctx, 180*time.Second, 2, "")
	members := r.cluster.Members(ctx)
	s.Check("one leader afterwards, every node back as a replica (no split brain)",
		healthy == nil && strings.Count(members, " Leader ") == 1 && strings.Count(members, " running") == 3,
		"%s", members)
	lost, dups, checked, err := r.verify()
	s.Check("read back every acknowledged note", err == nil, "%v", err)
	acked := r.acked()
	s.Sent += len(r.writes) + len(hits) + len(misses)
	s.Check("acknowledged writes lost: 0", err == nil && lost == 0, "%d of %d acknowledged writes (%d notes checked) lost", lost, acked, checked)
	s.Check("notes created twice: 0", err == nil && dups == 0, "%d titles stored more than once", dups)
	s.Outcomes = fmt.Sprintf("notes writes: %s; %d acknowledged, %d refused with 503, %d keyed creates sent again, %d keyless creates of unknown outcome",
		statusString(r.statuses), acked, r.refused, r.retried, r.unknown)
	// Each failover's period runs to the next fault (the last one's to
	// the end of the load).
	until := func(i int) time.Time {
		if i+1 < len(events) {
			return events[i+1].at
		}
		return stopAt.Add(10 * time.Second)
	}
	var windows, mwindows []string
	for i, ev := range events {
		w, _ := r.window(ev.at, until(i))
		windows = append(windows, fmt.Sprintf("%s %s", ev.name, fmtWindow(w)))
		s.Check(ev.name+": writes resume within 30 s", w >= 0 && w <= 30*time.Second, "longest time without an acknowledged write %s", fmtWindow(w))
		mw, _ := firstOK(misses, ev.at, until(i))
		mwindows = append(mwindows, fmt.Sprintf("%s %s", ev.name, fmtWindow(mw)))
	}
	hitErrs := failed(hits)
	s.Check("marketdata cache hits: 0 errors", len(hitErrs) == 0, "%d of %d hits failed%s", len(hitErrs), len(hits), example(hitErrs))
	missErrs := failed(misses)
	outside := 0
	for _, m := range missErrs {
		in := false
		for i, ev := range events {
			// The failover window is the database's, as the notes writers
			// measured it: from the fault to the write that ended the
			// longest gap. A request started up to a request timeout
			// before the fault can fail with it.
			w, closed := r.window(ev.at, until(i))
			if w < 0 {
				closed = until(i)
			}
			if m.Start.After(ev.at.Add(-RequestTimeout)) && m.Start.Before(closed) {
				in = true
			}
		}
		if !in {
			outside++
		}
	}
	// A miss cut off by a failover is read once more (the reads' retry),
	// so misses fail only while no primary answers at all.
	s.Check("marketdata cache misses fail only inside a failover window", outside == 0,
		"%d of %d misses failed, %d outside every failover window of the database%s",
		len(missErrs), len(misses), outside, example(missErrs))
	s.Failed += lost + dups + len(hitErrs) + outside
	s.Recovery = "notes writes: " + strings.Join(windows, ", ") + "; marketdata misses: " + strings.Join(mwindows, ", ")
	s.Note("Figures: %d writes acknowledged, %d lost, %d notes created twice, %d refused with 503; marketdata %d hits (%d errors), %d misses (%d errors).",
		acked, lost, dups, r.refused, len(hits), len(hitErrs), len(misses), len(missErrs))
	r.stop(ctx)

	FailoverMutation(ctx, e, script, port)
}

// FailoverMutation is the drill's proof that it can fail: synchronous_mode
// off, both standbys cut off the network for 6 s (standbys that are
// behind), then the primary killed. The promoted standby lacks what the primary had
// acknowledged, and the same read-back must count it as lost.
func FailoverMutation(ctx context.Context, e *Env, script string, port int) {
	s := e.Report.Scenario("PostgreSQL failover mutation check: synchronous_mode off, standbys behind (must lose writes)")
	// A standby as far behind as the frozen ones must still be allowed to
	// take over, as an asynchronous cluster tuned for availability would.
	r, err := startHARun(ctx, e, &harness.HACluster{Script: script, Prefix: "td-faults-ham", Port: port, Sync: false, MaxLag: 1 << 30}, "mutation")
	if err != nil {
		s.Check("cluster and services start", false, "%v", err)
		r.stop(ctx)
		return
	}
	defer r.stop(ctx)
	const writeFor = 17 * time.Second
	start := time.Now()
	var evErr error
	var killedAt time.Time
	var killed string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sleepUntil(ctx, start.Add(3*time.Second))
		leader, err := r.cluster.Leader(ctx)
		if err != nil {
			evErr = err
			return
		}
		standbys := slices.DeleteFunc([]string{"pg1", "pg2", "pg3"}, func(n string) bool { return n == leader })
		for _, n := range standbys {
			if err := r.cluster.Network(ctx, n, false); err != nil {
				evErr = err
			}
		}
		sleepUntil(ctx, start.Add(9*time.Second))
		killedAt, killed = time.Now(), leader
		if err := r.cluster.Docker(ctx, "kill", leader); err != nil {
			evErr = err
		}
		for _, n := range standbys {
			if err := r.cluster.Network(ctx, n, true); err != nil {
				evErr = err
			}
		}
	}()
	end := start.Add(writeFor)
	r.write(ctx, 4, func() bool { return ctx.Err() == nil && time.Now().Before(end) }, false)
	<-done
	healthy := r.cluster.WaitHealthy(ctx, 60*time.Second, 1, killed)
	lost, dups, _, err := r.verify()
	acked := r.acked()
	s.Sent += len(r.writes)
	s.Check("faults done, a standby promoted", evErr == nil && healthy == nil, "%v %v", evErr, healthy)
	s.Check("read back every acknowledged note", err == nil, "%v", err)
	s.Check("the read-back finds lost writes (the check can fail)", err == nil && lost > 0,
		"%d of %d acknowledged writes lost, %d duplicates; window %s", lost, acked, dups, fmtWindow(mutationWindow(r, killedAt)))
	s.Outcomes = fmt.Sprintf("notes writes: %s; %d acknowledged, %d lost", statusString(r.statuses), acked, lost)
}

func mutationWindow(r *haRun, killedAt time.Time) time.Duration {
	w, _ := r.window(killedAt, killedAt.Add(time.Minute))
	return w
}

// startHARun starts cluster and a notes-svc and a marketdata-svc on it,
// configured as the suite's own, with a key each.
func startHARun(ctx context.Context, e *Env, cluster *harness.HACluster, tag string) (*haRun, error) {
	r := &haRun{e: e, cluster: cluster, notesOf: map[string]*haNote{}, statuses: map[int]int{}}
	_ = cluster.Down(ctx) // a cluster left by an interrupted run
	base, err := cluster.Up(ctx)
	if err != nil {
		return nil, err
	}
	logDir := filepath.Dir(e.Notes.LogPath)
	clone := func(svc *harness.Service, urlVar, db string, extra map[string]string) (*harness.Service, error) {
		env := maps.Clone(svc.Env)
		env[urlVar] = base + "/" + db + "?sslmode=disable"
		maps.Copy(env, extra)
		out, err := harness.NewService(svc.Name, svc.Bin, filepath.Join(logDir, tag+"-"+svc.Name+".log"), env)
		if err != nil {
			return nil, err
		}
		for k := range env {
			if strings.HasSuffix(k, "_HTTP_ADDR") {
				env[k] = out.Addr
			}
		}
		return out, nil
	}
	if r.notes, err = clone(e.Notes, "NOTES_DATABASE_URL", "notes", nil); err != nil {
		return r, err
	}
	// Redis database 5 of the suite's server: nothing else uses it.
	if r.market, err = clone(e.Market, "MARKETDATA_DATABASE_URL", "marketdata", map[string]string{"MARKETDATA_REDIS_URL": e.Stack.RedisURL(5)}); err != nil {
		return r, err
	}
	if out, err := e.Stack.RedisCLI(ctx, "-n", "5", "flushdb"); err != nil {
		return r, fmt.Errorf("redis flushdb: %v: %s", err, out)
	}
	for _, step := range []struct {
		svc  *harness.Service
		args []string
	}{{r.notes, []string{"migrate"}}, {r.market, []string{"migrate"}}, {r.market, []string{"demo"}}} {
		if _, err := step.svc.CLI(ctx, step.args...); err != nil {
			return r, err
		}
	}
	if r.key, err = e.newKey(ctx, r.notes, "failover notes key", "--account", "failover"); err != nil {
		return r, err
	}
	if r.mkey, err = e.newKey(ctx, r.market, "failover marketdata key", "--account", "failover", "--rate-per-second", "100000"); err != nil {
		return r, err
	}
	for _, svc := range []*harness.Service{r.notes, r.market} {
		if err := svc.Start(ctx, nil); err != nil {
			return r, err
		}
	}
	return r, nil
}

// stop stops the services and removes the cluster, once.
func (r *haRun) stop(ctx context.Context) {
	if r.stopped {
		return
	}
	r.stopped = true
	for _, svc := range []*harness.Service{r.notes, r.market} {
		if svc != nil {
			_ = svc.Stop(ShutdownDrain + ShutdownTimeout + 5*time.Second)
		}
	}
	// The nodes' logs stay beside the services' for a failed run.
	logDir := filepath.Dir(r.e.Notes.LogPath)
	for _, n := range []string{"pg1", "pg2", "pg3", "haproxy"} {
		r.cluster.SaveLogs(ctx, n, filepath.Join(logDir, r.cluster.Prefix+"-"+n+".log"))
	}
	if err := r.cluster.Down(ctx); err != nil {
		r.e.Report.Error("remove HA cluster %s: %v", r.cluster.Prefix, err)
	}
}

func (r *haRun) marketGet(pathAndQuery string) *http.Request {
	sep := "?"
	if strings.Contains(pathAndQuery, "?") {
		sep = "&"
	}
	req, _ := http.NewRequest(http.MethodGet, r.market.URL(""), nil)
	setRawPath(req, pathAndQuery+sep+"access_key="+r.mkey)
	return req
}

// faults runs the drill's three failovers against the load that started
// at start: the primary SIGKILLed (and its node started again once a new
// primary leads, to come back as a replica), the new primary frozen past
// the TTL and let go, then a planned switchover.
func (r *haRun) faults(ctx context.Context, start time.Time) []haEvent {
	var events []haEvent
	do := func(name string, at time.Duration, f func(leader string) error) {
		sleepUntil(ctx, start.Add(at))
		// Each fault starts from a healthy cluster, so that each window
		// is one failover's.
		if err := r.cluster.WaitHealthy(ctx, 60*time.Second, 2, ""); err != nil {
			events = append(events, haEvent{name: name, at: time.Now(), err: err})
			return
		}
		leader, err := r.cluster.Leader(ctx)
		ev := haEvent{name: name, at: time.Now(), err: err}
		if err == nil {
			ev.err = f(leader)
		}
		events = append(events, ev)
	}
	do("SIGKILL of the primary", 6*time.Second, func(leader string) error {
		if err := r.cluster.Docker(ctx, "kill", leader); err != nil {
			return err
		}
		// The node comes back only once another leads, as a replica.
		if err := r.cluster.WaitHealthy(ctx, 60*time.Second, 1, leader); err != nil {
			return err
		}
		return r.cluster.Docker(ctx, "start", leader)
	})
	do("SIGSTOP of the new primary past the TTL, then SIGCONT", 24*time.Second, func(leader string) error {
		if err := r.cluster.Docker(ctx, "pause", leader); err != nil {
			return err
		}
		sleepUntil(ctx, time.Now().Add(haTTL+5*time.Second))
		return r.cluster.Docker(ctx, "unpause", leader)
	})
	do("planned switchover (patronictl switchover)", 48*time.Second, func(leader string) error {
		return r.cluster.Switchover(ctx, leader)
	})
	return events
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}

// write runs n writers while running reports true. Writer 0 creates without an Idempotency-Key when
// keyless is set: such a create is sent once, whatever happens.
func (r *haRun) write(ctx context.Context, n int, running func() bool, keyless bool) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			client := load.NewClient(RequestTimeout+2*time.Second, true)
			var mine []*haNote
			for i := 0; running(); i++ {
				title := fmt.Sprintf("failover-w%d-%d", w, i)
				if nt := r.create(ctx, client, title, !(keyless && w == 0), time.Now().Add(10*time.Second)); nt != nil {
					mine = append(mine, nt)
				}
				if len(mine) > 0 {
					r.update(client, mine[len(mine)-1], i)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

// send does one notes request and records it.
func (r *haRun) send(client *http.Client, method, path string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	req := r.e.NotesRequest(method, path, r.key, body, hdr)
	req.URL.Host = r.notes.Addr
	res := load.Do(client, 0, func(int) (*http.Request, error) { return req, nil })
	r.mu.Lock()
	r.writes = append(r.writes, haWrite{start: res.Start, end: res.End, status: res.Status})
	r.statuses[res.Status]++
	if res.Status == http.StatusServiceUnavailable {
		r.refused++
	}
	r.mu.Unlock()
	return res.Status, res.Header, res.Body
}

// create posts a note. With a key it sends the same request again after
// no answer or a 503 until an answer comes or giveUp passes, as a client
// should; without one it sends it once.
func (r *haRun) create(ctx context.Context, client *http.Client, title string, keyed bool, giveUp time.Time) *haNote {
	content := Marker("failover")
	body, _ := json.Marshal(map[string]string{"title": title, "content": content})
	hdr := map[string]string{}
	if keyed {
		hdr["Idempotency-Key"] = title
	}
	for try := 0; ; try++ {
		if try > 0 {
			r.mu.Lock()
			r.retried++
			r.mu.Unlock()
		}
		status, h, b := r.send(client, http.MethodPost, "/v1/notes", body, hdr)
		if status == http.StatusCreated {
			var n Note
			if json.Unmarshal(b, &n) != nil {
				return nil
			}
			nt := &haNote{id: n.ID, title: title, etag: h.Get("ETag"), acked: content}
			r.mu.Lock()
			r.notesOf[title] = nt
			r.mu.Unlock()
			return nt
		}
		retryable := status == 0 || status == http.StatusServiceUnavailable || status == http.StatusConflict
		if !keyed || !retryable || time.Now().After(giveUp) || ctx.Err() != nil {
			if !keyed && (status == 0 || status >= 500) {
				r.mu.Lock()
				r.unknown++
				r.mu.Unlock()
			}
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// update replaces the note's content under If-Match; an answer that never
// came leaves the content pending (the note may hold it or the last
// acknowledged one).
func (r *haRun) update(client *http.Client, nt *haNote, i int) {
	content := Marker(fmt.Sprintf("update%d", i))
	body, _ := json.Marshal(map[string]string{"title": nt.title, "content": content})
	status, h, _ := r.send(client, http.MethodPut, "/v1/notes/"+nt.id, body, map[string]string{"If-Match": nt.etag})
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case status == http.StatusOK:
		nt.acked, nt.pending, nt.etag = content, nil, h.Get("ETag")
	case status == 0 || status >= 500 || status == http.StatusPreconditionFailed:
		// 412 after a retry of a first try that committed: it holds.
		nt.pending = append(nt.pending, content)
	}
	if status == http.StatusPreconditionFailed || status == 0 || status >= 500 {
		// Learn the current tag, so the writer goes on updating.
		req := r.e.NotesRequest(http.MethodGet, "/v1/notes/"+nt.id, r.key, nil, nil)
		req.URL.Host = r.notes.Addr
		if res := load.Do(client, 0, func(int) (*http.Request, error) { return req, nil }); res.Status == http.StatusOK {
			nt.etag = res.Header.Get("ETag")
		}
	}
}

// acked counts the acknowledged writes.
func (r *haRun) acked() int {
	n := 0
	for _, w := range r.writes {
		if w.status >= 200 && w.status < 300 {
			n++
		}
	}
	return n
}

// verify lists the account's notes and compares: a note acknowledged but
// missing, or holding neither its last acknowledged content nor one sent
// after it, is a lost write; a title stored twice is a duplicate.
func (r *haRun) verify() (lost, dups, checked int, err error) {
	var list []Note
	for try := 0; ; try++ {
		req := r.e.NotesRequest(http.MethodGet, "/v1/notes", r.key, nil, nil)
		req.URL.Host = r.notes.Addr
		resp, derr := r.e.Do(req)
		if derr == nil && resp.Status == http.StatusOK {
			if err = json.Unmarshal(resp.Body, &list); err != nil {
				return 0, 0, 0, fmt.Errorf("list notes: %w", err)
			}
			break
		}
		if try == 20 {
			return 0, 0, 0, fmt.Errorf("list notes: status %d, %v", resp.Status, derr)
		}
		time.Sleep(time.Second)
	}
	byTitle := map[string][]Note{}
	for _, n := range list {
		byTitle[n.Title] = append(byTitle[n.Title], n)
	}
	for _, ns := range byTitle {
		if len(ns) > 1 {
			dups++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for title, nt := range r.notesOf {
		checked++
		ns := byTitle[title]
		found := false
		for _, n := range ns {
			if n.ID == nt.id && (n.Content == nt.acked || slices.Contains(nt.pending, n.Content)) {
				found = true
			}
		}
		if !found {
			lost++
		}
	}
	return lost, dups, checked, nil
}

// window is the failover's unavailability: the longest time without an
// acknowledged write between at and until, counted from at (a write
// acknowledged just after at, before the fault took effect, does not end
// it: the gap after it does). -1 when no write was acknowledged after at.
func (r *haRun) window(at, until time.Time) (time.Duration, time.Time) {
	r.mu.Lock()
	var ends []time.Time
	for _, w := range r.writes {
		if w.status >= 200 && w.status < 300 && w.end.After(at) && w.end.Before(until) {
			ends = append(ends, w.end)
		}
	}
	r.mu.Unlock()
	return longestGap(ends, at)
}

// longestGap is the longest interval between at and the first of ends, or
// between two consecutive ends, and the end that closed it.
func longestGap(ends []time.Time, at time.Time) (time.Duration, time.Time) {
	if len(ends) == 0 {
		return -1, time.Time{}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	gap, closed, prev := time.Duration(0), at, at
	for _, t := range ends {
		if t.Sub(prev) > gap {
			gap, closed = t.Sub(prev), t
		}
		prev = t
	}
	return gap, closed
}

// firstOK is window's measure for a load's successes.
func firstOK(rs []load.Result, at, until time.Time) (time.Duration, time.Time) {
	var ends []time.Time
	for _, x := range rs {
		if x.Err == nil && x.Status == http.StatusOK && x.End.After(at) && x.End.Before(until) {
			ends = append(ends, x.End)
		}
	}
	return longestGap(ends, at)
}

func failed(rs []load.Result) []load.Result {
	var out []load.Result
	for _, x := range rs {
		if x.Err != nil || x.Status != http.StatusOK {
			out = append(out, x)
		}
	}
	return out
}

func example(rs []load.Result) string {
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (e.g. status %d, %v, %.120s)", rs[0].Status, rs[0].Err, rs[0].Body)
}

func fmtWindow(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// FailoverScript is the cluster script from the repository root the
// runner works in.
func FailoverScript() (string, error) {
	p, err := filepath.Abs(filepath.Join("scripts", "ha-cluster.sh"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("failover drill: %w", err)
	}
	return p, nil
}
