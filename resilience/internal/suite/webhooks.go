package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
)

// webhookRetryBase is the first retry's delay notes-svc runs with in the
// webhook faults (NOTES_WEBHOOK_RETRY_BASE): at the default 30 s, a
// receiver back after 20 s would wait a minute more for its retries.
const webhookRetryBase = time.Second

// webhookEnv is notes-svc's extra environment in the webhook faults: a
// receiver on loopback over plain http, short retries, and fewer attempts
// at once than the suite's pool of DBMaxOpenConns: each attempt holds a
// connection while it sends, and at the default 10 the attempts took
// every connection the relay, River and the API needed.
var webhookEnv = map[string]string{
	"NOTES_WEBHOOK_ALLOW_PRIVATE": "true",
	"NOTES_WEBHOOK_RETRY_BASE":    webhookRetryBase.String(),
	"NOTES_WEBHOOK_WORKERS":       fmt.Sprint(DBMaxOpenConns - 2),
	"NOTES_WEBHOOK_PER_ENDPOINT":  fmt.Sprint(DBMaxOpenConns - 2),
}

// hookSink is a webhook receiver: it answers 204 (or, with failRate, 500
// at random) and keeps how often each event came with a 2xx answer, and
// which notes' creation events came. It can go down (its listener and
// connections closed) and come back on the same address.
type hookSink struct {
	addr     string
	failRate atomic.Value // float64
	delay    atomic.Int64 // ns before each answer
	refused  atomic.Int64 // attempts answered 500
	secret   atomic.Pointer[string]

	mu    sync.Mutex
	srv   *http.Server
	count map[string]int  // event id -> deliveries answered 2xx
	notes map[string]bool // ids of notes whose note.created came
}

func newHookSink() (*hookSink, error) {
	h := &hookSink{count: map[string]int{}, notes: map[string]bool{}}
	h.failRate.Store(0.0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.addr = ln.Addr().String()
	h.serve(ln)
	return h, nil
}

func (h *hookSink) serve(ln net.Listener) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	go srv.Serve(ln)
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var secret string
	if s := h.secret.Load(); s != nil {
		secret = *s
	}
	// Every delivery must verify under the endpoint's secret, as a
	// customer's receiver checks it: one that does not is refused, so it
	// shows as an event missing at the end.
	ev, err := webhook.ReadEvent(r, secret, 0)
	if err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if d := time.Duration(h.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	if rand.Float64() < h.failRate.Load().(float64) {
		h.refused.Add(1)
		http.Error(w, "refused at random", http.StatusInternalServerError)
		return
	}
	h.mu.Lock()
	h.count[ev.ID]++
	if ev.Type == "note.created" {
		h.notes[ev.ObjectID()] = true
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// down closes the listener and every connection: attempts are refused.
func (h *hookSink) down() {
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()
	_ = srv.Close()
}

// up listens on the same address again.
func (h *hookSink) up() error {
	ln, err := net.Listen("tcp", h.addr)
	if err != nil {
		return err
	}
	h.serve(ln)
	return nil
}

// tally is what came of the notes written: distinct events received,
// those received more than once, and the written notes whose event never
// came.
func (h *hookSink) tally(written []string) (delivered, dup, lost int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.count {
		if c > 1 {
			dup++
		}
	}
	for _, id := range written {
		if !h.notes[id] {
			lost++
		}
	}
	return len(h.count), dup, lost
}

// waitAll waits until every written note's event came, or limit passed,
// and returns how long it waited.
func (h *hookSink) waitAll(ctx context.Context, written []string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit && ctx.Err() == nil {
		if _, _, lost := h.tally(written); lost == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// Webhooks runs the three webhook faults, each with its own receiver and
// endpoint: notes-svc killed while deliveries are in flight, a receiver
// down for downFor, and a receiver answering 500 to 30% of attempts. No
// event written may be lost; duplicates are allowed (at least once) and
// reported.
func Webhooks(ctx context.Context, e *Env, downFor time.Duration) {
	restart := func(extra map[string]string) error {
		_ = e.Notes.Stop(ShutdownDrain + ShutdownTimeout + 5*time.Second)
		return e.Notes.Start(ctx, extra)
	}
	if err := restart(webhookEnv); err != nil {
		e.Report.Error("webhooks: start notes-svc with webhook settings: %v", err)
		return
	}
	webhookKilled(ctx, e)
	webhookReceiverDown(ctx, e, downFor)
	webhookRandom500(ctx, e)
	if err := restart(nil); err != nil {
		e.Report.Error("webhooks: restart notes-svc: %v", err)
	}
}

// webhookScenario opens the scenario name with a receiver set up by
// webhookSetup; a setup that fails is the scenario's failed check, and ok
// is false.
func webhookScenario(e *Env, name string) (s *report.Scenario, h *hookSink, stop func(), ok bool) {
	s = e.Report.Scenario(name)
	h, stop, err := webhookSetup(e)
	if err != nil {
		s.Check("setup", false, "%v", err)
		return s, nil, nil, false
	}
	return s, h, stop, true
}

// webhookSetup starts a receiver and registers it as an endpoint of key A's
// account; stop deletes the endpoint (and its queued deliveries) and shuts
// the receiver.
func webhookSetup(e *Env) (h *hookSink, stop func(), err error) {
	h, err = newHookSink()
	if err != nil {
		return nil, nil, err
	}
	body := fmt.Sprintf(`{"url":"http://%s/hook"}`, h.addr)
	resp, err := e.Do(e.NotesRequest(http.MethodPost, "/v1/webhook_endpoints", e.NotesKeyA, []byte(body), nil))
	if err == nil && resp.Status != http.StatusCreated {
		err = fmt.Errorf("create endpoint: status %d: %s", resp.Status, resp.Body)
	}
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err == nil {
		err = json.Unmarshal(resp.Body, &ep)
	}
	if err != nil {
		h.down()
		return nil, nil, err
	}
	e.Secret(ep.Secret, "webhook endpoint secret")
	h.secret.Store(&ep.Secret)
	return h, func() {
		if resp, err := e.Do(e.NotesRequest(http.MethodDelete, "/v1/webhook_endpoints/"+ep.ID, e.NotesKeyA, nil, nil)); err != nil || resp.Status != http.StatusOK {
			e.Report.Error("webhooks: delete endpoint: %v %d", err, resp.Status)
		}
		h.down()
	}, nil
}

// writeNotes creates n notes for key A, spread evenly over d (at once when
// d is 0), and returns the ids of those acknowledged and how many failed.
func writeNotes(ctx context.Context, e *Env, n int, d time.Duration, what string) (ids []string, failed int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		if d > 0 {
			if wait := time.Until(start.Add(d * time.Duration(i) / time.Duration(n))); wait > 0 {
				time.Sleep(wait)
			}
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			note, _, err := e.CreateNote(e.NotesKeyA, fmt.Sprintf("webhook %s %d", what, i), e.NoteContent("webhook fault"), nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			ids = append(ids, note.ID)
		})
	}
	wg.Wait()
	return ids, failed
}

// webhookOutcome records the counts of a fault on s and checks that none
// was lost.
func webhookOutcome(s *report.Scenario, h *hookSink, written []string, writeFailed int) {
	delivered, dup, lost := h.tally(written)
	s.Sent, s.Failed = len(written), lost
	s.Outcomes = fmt.Sprintf("events written %d, delivered %d (distinct event ids received), duplicates %d (received more than once), lost %d; %d attempts answered 500; %d writes failed",
		len(written), delivered, dup, lost, h.refused.Load(), writeFailed)
	s.Check("no event lost", lost == 0 && len(written) > 0, "%d written, %d never received", len(written), lost)
}

func webhookKilled(ctx context.Context, e *Env) {
	s, h, stop, ok := webhookScenario(e, "Webhooks: notes-svc killed (kill -9) with deliveries in flight, then restarted")
	if !ok {
		return
	}
	defer stop()
	// A slow receiver keeps attempts in flight when the process dies.
	h.delay.Store(int64(50 * time.Millisecond))
	written, failed := writeNotes(ctx, e, 300, 0, "kill")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if d, _, _ := h.tally(nil); d >= 20 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	before, _, _ := h.tally(nil)
	if err := e.Notes.Signal(syscall.SIGKILL); err != nil {
		s.Check("kill -9", false, "%v", err)
		return
	}
	e.Notes.Wait(10 * time.Second)
	if err := e.Notes.Start(ctx, webhookEnv); err != nil {
		s.Check("restart", false, "%v", err)
		return
	}
	waited := h.waitAll(ctx, written, 150*time.Second)
	webhookOutcome(s, h, written, failed)
	s.Recovery = fmt.Sprintf("killed with %d of %d delivered; all delivered %.1f s after the restart", before, len(written), waited.Seconds())
	s.Note("Attempts that were running when the process died are retried once River's rescuer finds them stuck (70 s), then after NOTES_WEBHOOK_RETRY_BASE=%s; those the receiver had already taken come twice.", webhookRetryBase)
}

func webhookReceiverDown(ctx context.Context, e *Env, downFor time.Duration) {
	s, h, stop, ok := webhookScenario(e, fmt.Sprintf("Webhooks: receiver down for %s, then back", downFor))
	if !ok {
		return
	}
	defer stop()
	h.down()
	// Five notes a second while it is down.
	n := max(10, int(downFor.Seconds()*5))
	written, failed := writeNotes(ctx, e, n, downFor, "down")
	if err := h.up(); err != nil {
		s.Check("receiver back", false, "%v", err)
		return
	}
	// Retries back off from NOTES_WEBHOOK_RETRY_BASE, doubling with ±25%
	// jitter: the first after the receiver is back may come up to about
	// 1.25 x the down time later.
	waited := h.waitAll(ctx, written, downFor*3/2+30*time.Second)
	webhookOutcome(s, h, written, failed)
	s.Recovery = fmt.Sprintf("all delivered %.1f s after the receiver came back", waited.Seconds())
	s.Note("%d notes written at 5/s while the receiver refused connections; retries back off from NOTES_WEBHOOK_RETRY_BASE=%s (doubling, ±25%% jitter).", n, webhookRetryBase)
}

func webhookRandom500(ctx context.Context, e *Env) {
	s, h, stop, ok := webhookScenario(e, fmt.Sprintf("Webhooks: receiver answers 500 to 30%% of attempts at random for %s", webhookFlakyFor))
	if !ok {
		return
	}
	defer stop()
	h.failRate.Store(0.3)
	start := time.Now()
	written, failed := writeNotes(ctx, e, 200, 10*time.Second, "500")
	// The refusals end after webhookFlakyFor: answered at random for
	// ever, one event in a few hundred fails six times in a row and waits
	// minutes for its next retry, longer than the step may take, though
	// it is not lost.
	time.Sleep(time.Until(start.Add(webhookFlakyFor)))
	h.failRate.Store(0.0)
	h.waitAll(ctx, written, 60*time.Second)
	webhookOutcome(s, h, written, failed)
	s.Recovery = fmt.Sprintf("all delivered %.1f s after the first write", time.Since(start).Seconds())
	s.Check("some attempts refused", h.refused.Load() > 0, "%d attempts answered 500", h.refused.Load())
	s.Note("200 notes written over 10 s, refusals for %s, NOTES_WEBHOOK_RETRY_BASE=%s: the last retries of the refused attempts come within about a minute of the end.", webhookFlakyFor, webhookRetryBase)
}

// webhookFlakyFor is how long the receiver answers 500 at random.
const webhookFlakyFor = 30 * time.Second
