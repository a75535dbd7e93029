package delivery_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	domain "github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/delivery"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhookdb"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// receiver is a webhook endpoint that records what it gets and answers
// with the statuses of answer, then 200.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
	answer []int
}

func newReceiver(t *testing.T, answer ...int) *receiver {
	r := &receiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, body)
		status := http.StatusOK
		if len(r.answer) > 0 {
			status, r.answer = r.answer[0], r.answer[1:]
			if len(r.answer) == 0 && status != http.StatusOK {
				r.answer = []int{status} // the last status repeats
			}
		}
		r.mu.Unlock()
		if status/100 == 3 {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() ([]*http.Request, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.got...), append([][]byte(nil), r.bodies...)
}

type fixture struct {
	db     *sql.DB
	store  *webhookdb.Store
	svc    *domain.Service
	queue  *delivery.Queue
	a, b   string
	notesS *notesdb.Store
}

func newFixture(t *testing.T, o delivery.Options) fixture {
	t.Helper()
	db := testenv.DBWith(t, notesdb.PoolOptions{MaxOpenConns: 10})
	ns, err := notesdb.New(db)
	if err != nil {
		t.Fatal(err)
	}
	accounts := make([]string, 2)
	for i, name := range []string{"alice", "bob"} {
		if accounts[i], err = ns.EnsureAccount(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	a, b := accounts[0], accounts[1]
	store, err := webhookdb.New(db.DB)
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := domain.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	guard := &egress.Guard{AllowPrivate: true}
	o.DB, o.Store, o.Cipher, o.Guard, o.EventLog = db.DB, store, cipher, guard, ns
	o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.PollInterval == 0 {
		o.PollInterval = 20 * time.Millisecond
	}
	if o.RetryBase == 0 {
		o.RetryBase = 20 * time.Millisecond
	}
	q, err := delivery.New(o)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := domain.NewService(domain.Options{Store: store, Cipher: cipher, URLs: guard, Redeliverer: q})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db.DB, store: store, svc: svc, queue: q, a: a, b: b, notesS: ns}
}

func (f fixture) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = f.queue.Stop(sctx)
		cancel()
	})
}

func (f fixture) endpoint(t *testing.T, account, url string, types ...string) (domain.Endpoint, string) {
	t.Helper()
	e, secret, err := f.svc.Create(context.Background(), account, domain.Draft{URL: url, Types: types})
	if err != nil {
		t.Fatal(err)
	}
	return e, secret
}

// event writes an event row, as a note write does, and returns once the
// relay has passed it (its deliveries and their jobs written).
func (f fixture) event(t *testing.T, account, typ string) (eventID string) {
	t.Helper()
	db := f.store.DB()
	id, err := notes.NewPrefixedID("evt_")
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		XID string `gorm:"column:xid"`
		Seq int64  `gorm:"column:seq"`
	}
	if err := db.Raw(`INSERT INTO events (id, account_id, type, created_at, data) VALUES (?, ?, ?, now(), ?) RETURNING xid::text AS xid, seq`,
		id, account, typ, `{"object":{"id":"note_1","title":"hi"}}`).Scan(&at).Error; err != nil {
		t.Fatal(err)
	}
	f.relayPast(t, at.XID, at.Seq)
	return id
}

// relayPast relays until the relay's position is at or past the event
// (xid, seq): a transaction older than the event may still hold it back.
func (f fixture) relayPast(t *testing.T, xid string, seq int64) {
	t.Helper()
	wait(t, "the relay to pass the event", func() bool {
		if _, err := f.queue.RelayOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		var past bool
		if err := f.db.QueryRow("SELECT (after_xid, after_seq) >= ($1::xid8, $2) FROM webhook_relay", xid, seq).Scan(&past); err != nil {
			t.Fatal(err)
		}
		return past
	})
}

// wait polls the database until cond holds; the bound only turns a hang
// into a failure.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (f fixture) deliveries(t *testing.T, account, endpointID string) []domain.Delivery {
	t.Helper()
	out, _, err := f.svc.Deliveries(context.Background(), account, endpointID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f fixture) settled(t *testing.T, account, endpointID string, n int, status string) []domain.Delivery {
	t.Helper()
	var ds []domain.Delivery
	wait(t, nOf(n, status), func() bool {
		ds = f.deliveries(t, account, endpointID)
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if d.Status != status {
				return false
			}
		}
		return true
	})
	return ds
}

func nOf(n int, status string) string { return strconv.Itoa(n) + " deliveries " + status }

func (f fixture) jobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow("SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSignedDelivery(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	rcv := newReceiver(t)
	e, secret := f.endpoint(t, f.a, rcv.URL+"/hook")
	onlyDeleted, _ := f.endpoint(t, f.a, rcv.URL+"/deleted", notes.EventNoteDeleted)
	other, _ := f.endpoint(t, f.b, rcv.URL+"/bob")

	// An account without endpoints costs no job.
	carol, err := f.notesS.EnsureAccount(context.Background(), "carol")
	if err != nil {
		t.Fatal(err)
	}
	f.event(t, carol, notes.EventNoteCreated)
	if n := f.jobs(t); n != 0 {
		t.Fatalf("%d jobs for an account without endpoints", n)
	}
	id := f.event(t, f.a, notes.EventNoteCreated)
	if n := f.jobs(t); n != 1 {
		t.Fatalf("%d jobs, want 1: the endpoint of note.deleted and bob's take none", n)
	}
	f.start(t)
	ds := f.settled(t, f.a, e.ID, 1, domain.StatusSucceeded)
	if d := ds[0]; d.EventID != id || d.EventType != notes.EventNoteCreated || d.Attempts != 1 || d.LastStatus == nil || *d.LastStatus != 200 || d.LastLatencyMS == nil {
		t.Errorf("delivery = %+v", d)
	}
	reqs, bodies := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r, body := reqs[0], bodies[0]
	if r.URL.Path != "/hook" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Tickerdesk-Event-Id") != id || !strings.HasPrefix(r.Header.Get("User-Agent"), "Tickerdesk-Webhooks/") {
		t.Errorf("request %s %s headers %v", r.Method, r.URL.Path, r.Header)
	}
	if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), body, time.Minute); err != nil {
		t.Errorf("signature does not verify: %v (%s)", err, r.Header.Get(webhook.SignatureHeader))
	}
	if err := webhook.Verify("whsec_other", r.Header.Get(webhook.SignatureHeader), body, time.Minute); !errors.Is(err, webhook.ErrNoMatch) {
		t.Errorf("another secret verifies: %v", err)
	}
	var ev struct {
		CreatedAt string `json:"created_at"`
		Data      struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || len(raw) != 4 {
		t.Fatalf("body %s: %v", body, err)
	}
	_ = json.Unmarshal(body, &ev)
	var gotID, gotType string
	_ = json.Unmarshal(raw["id"], &gotID)
	_ = json.Unmarshal(raw["type"], &gotType)
	if gotID != id || gotType != notes.EventNoteCreated || ev.Data.Object["id"] != "note_1" {
		t.Errorf("body %s", body)
	}
	if _, err := time.Parse(time.RFC3339, ev.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", ev.CreatedAt, err)
	}
	if n := len(f.deliveries(t, f.a, onlyDeleted.ID)) + len(f.deliveries(t, f.b, other.ID)); n != 0 {
		t.Errorf("%d deliveries to endpoints that did not ask for the event", n)
	}

	// A retry sends it again, as a new job; another account cannot.
	if err := f.svc.Retry(context.Background(), f.b, e.ID, ds[0].ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob retried alice's delivery: %v", err)
	}
	if err := f.svc.Retry(context.Background(), f.a, e.ID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	wait(t, "the second request", func() bool { r, _ := rcv.requests(); return len(r) == 2 })
	wait(t, "the second attempt", func() bool {
		d := f.deliveries(t, f.a, e.ID)[0]
		return d.Status == domain.StatusSucceeded && d.Attempts == 2
	})
}

func TestRetryAfterServerError(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	rcv := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	e, secret := f.endpoint(t, f.a, rcv.URL)
	f.event(t, f.a, notes.EventNoteUpdated)
	f.start(t)
	ds := f.settled(t, f.a, e.ID, 1, domain.StatusSucceeded)
	if ds[0].Attempts != 2 || *ds[0].LastStatus != 200 || ds[0].NextAttemptAt != nil {
		t.Errorf("delivery = %+v", ds[0])
	}
	reqs, bodies := rcv.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Tickerdesk-Event-Id") != reqs[1].Header.Get("Tickerdesk-Event-Id") {
		t.Fatalf("%d requests", len(reqs))
	}
	for i := range reqs {
		if err := webhook.Verify(secret, reqs[i].Header.Get(webhook.SignatureHeader), bodies[i], time.Minute); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
}

func TestRotationSendsBothSignatures(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	rcv := newReceiver(t)
	e, old := f.endpoint(t, f.a, rcv.URL)
	_, fresh, err := f.svc.RotateSecret(context.Background(), f.a, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.RotateSecret(context.Background(), f.b, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob rotated alice's secret: %v", err)
	}
	if fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotated secret %q", fresh)
	}
	f.event(t, f.a, notes.EventNoteTrashed)
	f.start(t)
	f.settled(t, f.a, e.ID, 1, domain.StatusSucceeded)
	reqs, bodies := rcv.requests()
	sig := reqs[0].Header.Get(webhook.SignatureHeader)
	if strings.Count(sig, "v1=") != 2 {
		t.Errorf("signature %q: want two v1 during the rotation", sig)
	}
	for _, s := range []string{old, fresh} {
		if err := webhook.Verify(s, sig, bodies[0], time.Minute); err != nil {
			t.Errorf("secret %.10s...: %v", s, err)
		}
	}
}

// A 3xx is a failed attempt (not followed), and an endpoint that keeps
// failing until the retries run out is disabled, with an event saying so.
func TestDisabledAfterRetries(t *testing.T) {
	f := newFixture(t, delivery.Options{MaxAttempts: 3})
	rcv := newReceiver(t, http.StatusInternalServerError, http.StatusFound)
	e, _ := f.endpoint(t, f.a, rcv.URL)
	f.event(t, f.a, notes.EventNoteCreated)
	f.start(t)
	ds := f.settled(t, f.a, e.ID, 1, domain.StatusFailed)
	if d := ds[0]; d.Attempts != 3 || *d.LastStatus != http.StatusFound || !strings.Contains(d.LastError, "302") {
		t.Errorf("delivery = %+v", d)
	}
	if reqs, _ := rcv.requests(); len(reqs) != 3 {
		t.Errorf("%d requests, want 3 (the redirect not followed)", len(reqs))
	}
	got, err := f.svc.Get(context.Background(), f.a, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledReason == "" {
		t.Errorf("endpoint after the retries: %+v", got)
	}
	var typ, data string
	if err := f.db.QueryRow("SELECT type, data::text FROM events WHERE account_id = $1 AND type = 'webhook_endpoint.disabled'", f.a).Scan(&typ, &data); err != nil {
		t.Fatalf("no disabled event: %v", err)
	}
	if !strings.Contains(data, e.ID) {
		t.Errorf("disabled event data %s", data)
	}
	// A disabled endpoint gets no new deliveries.
	f.event(t, f.a, notes.EventNoteCreated)
	if n := len(f.deliveries(t, f.a, e.ID)); n != 1 {
		t.Errorf("%d deliveries to a disabled endpoint", n)
	}
}

// A delivery retried past MaxAge fails on its next failure, whatever
// attempts remain.
func TestMaxAgeEndsRetries(t *testing.T) {
	f := newFixture(t, delivery.Options{MaxAge: time.Millisecond, MaxAttempts: 50})
	rcv := newReceiver(t, http.StatusServiceUnavailable)
	e, _ := f.endpoint(t, f.a, rcv.URL)
	f.event(t, f.a, notes.EventNoteCreated)
	f.start(t)
	ds := f.settled(t, f.a, e.ID, 1, domain.StatusFailed)
	if ds[0].Attempts != 1 {
		t.Errorf("attempts = %d", ds[0].Attempts)
	}
}

// With every slot of an endpoint taken, the job waits (snoozes) instead
// of sending, and sends once a slot frees.
func TestPerEndpointSlots(t *testing.T) {
	f := newFixture(t, delivery.Options{PerEndpoint: 1, SlotWait: 20 * time.Millisecond})
	rcv := newReceiver(t)
	e, _ := f.endpoint(t, f.a, rcv.URL)
	holder, err := f.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(context.Background(), "SELECT pg_advisory_lock(hashtext($1), 0)", e.ID); err != nil {
		t.Fatal(err)
	}
	f.event(t, f.a, notes.EventNoteCreated)
	f.start(t)
	wait(t, "a snooze", func() bool {
		var snoozes int
		_ = f.db.QueryRow("SELECT coalesce((metadata->>'snoozes')::int, 0) FROM river_job WHERE kind = 'webhook_delivery'").Scan(&snoozes)
		return snoozes >= 2
	})
	if reqs, _ := rcv.requests(); len(reqs) != 0 {
		t.Fatalf("%d requests while the only slot was taken", len(reqs))
	}
	if _, err := holder.ExecContext(context.Background(), "SELECT pg_advisory_unlock(hashtext($1), 0)", e.ID); err != nil {
		t.Fatal(err)
	}
	f.settled(t, f.a, e.ID, 1, domain.StatusSucceeded)
}

// A job takes exactly one free slot: with the first of three taken, the
// attempt holds one advisory lock of its own while it sends, not one per
// slot it tried.
func TestSlotTakesOneLock(t *testing.T) {
	f := newFixture(t, delivery.Options{PerEndpoint: 3})
	holder, err := f.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var holderPID int
	if err := holder.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&holderPID); err != nil {
		t.Fatal(err)
	}
	locks := make(chan int, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		_ = f.db.QueryRow("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> $1", holderPID).Scan(&n)
		select {
		case locks <- n:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	e, _ := f.endpoint(t, f.a, rcv.URL)
	if _, err := holder.ExecContext(context.Background(), "SELECT pg_advisory_lock(hashtext($1), 0)", e.ID); err != nil {
		t.Fatal(err)
	}
	f.event(t, f.a, notes.EventNoteCreated)
	f.start(t)
	f.settled(t, f.a, e.ID, 1, domain.StatusSucceeded)
	if n := <-locks; n != 1 {
		t.Errorf("%d advisory locks held by the sender during its attempt, want 1", n)
	}
}

// Deleting an endpoint ends its deliveries still queued.
func TestDeletedEndpoint(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	rcv := newReceiver(t)
	e, _ := f.endpoint(t, f.a, rcv.URL)
	f.event(t, f.a, notes.EventNoteCreated)
	if err := f.svc.Delete(context.Background(), f.b, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob deleted alice's endpoint: %v", err)
	}
	if err := f.svc.Delete(context.Background(), f.a, e.ID); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	wait(t, "the job to complete", func() bool {
		var state string
		_ = f.db.QueryRow("SELECT state FROM river_job WHERE kind = 'webhook_delivery'").Scan(&state)
		return state == "completed"
	})
	if reqs, _ := rcv.requests(); len(reqs) != 0 {
		t.Errorf("%d requests to a deleted endpoint", len(reqs))
	}
}

func TestResponseReadIsCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := []byte(strings.Repeat("x", 1<<10))
		for range 1 << 10 { // 1 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	status, read, err := delivery.SendOnce(context.Background(), (&egress.Guard{AllowPrivate: true}).Client(10*time.Second), srv.URL, []byte(`{}`))
	if err != nil || status != 200 || read != delivery.MaxResponseBytes {
		t.Errorf("status %d, read %d, err %v: want 200 and %d bytes read", status, read, err, delivery.MaxResponseBytes)
	}
}

// maintenance records the cut-offs it is called with.
type maintenance struct {
	mu            sync.Mutex
	trash, events []time.Time
}

func (m *maintenance) PurgeTrash(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trash = append(m.trash, before)
	return 0, nil
}

func (m *maintenance) PruneEvents(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, before)
	return 0, nil
}

// The leader runs the retention tasks once at start, each with its own
// retention.
func TestMaintenanceRunsAtStart(t *testing.T) {
	m := &maintenance{}
	started := time.Now()
	f := newFixture(t, delivery.Options{Maintenance: m, TrashRetention: 48 * time.Hour, EventRetention: 240 * time.Hour})
	f.start(t)
	wait(t, "both tasks", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.trash) > 0 && len(m.events) > 0
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	near := func(got, want time.Time) bool {
		return got.After(want.Add(-time.Minute)) && got.Before(want.Add(time.Minute))
	}
	if !near(m.trash[0], started.Add(-48*time.Hour)) || !near(m.events[0], started.Add(-240*time.Hour)) {
		t.Errorf("cut-offs trash %v, events %v; started %v", m.trash[0], m.events[0], started)
	}
}

func TestEndpointsTenancyAndCap(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	ctx := context.Background()
	var ids []string
	for range domain.MaxEndpoints {
		e, _ := f.endpoint(t, f.a, "http://127.0.0.1:9/hook")
		ids = append(ids, e.ID)
	}
	if _, _, err := f.svc.Create(ctx, f.a, domain.Draft{URL: "http://127.0.0.1:9/hook"}); !errors.Is(err, domain.ErrTooManyEndpoints) {
		t.Errorf("endpoint %d: %v", domain.MaxEndpoints+1, err)
	}
	// The cap is per account.
	f.endpoint(t, f.b, "http://127.0.0.1:9/hook")
	list, err := f.svc.List(ctx, f.a)
	if err != nil || len(list) != domain.MaxEndpoints || list[0].ID != ids[0] {
		t.Fatalf("list: %d endpoints, %v", len(list), err)
	}
	if _, err := f.svc.Get(ctx, f.b, ids[0]); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob read alice's endpoint: %v", err)
	}
	off := false
	if _, err := f.svc.Update(ctx, f.b, ids[0], domain.Patch{Enabled: &off}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob updated alice's endpoint: %v", err)
	}
	if _, _, err := f.svc.Deliveries(ctx, f.b, ids[0], 10, 0); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bob listed alice's deliveries: %v", err)
	}
	types := []string{notes.EventNoteDeleted, notes.EventNoteDeleted, "note.exploded"}
	if _, err := f.svc.Update(ctx, f.a, ids[0], domain.Patch{Types: &types}); err == nil || !strings.Contains(err.Error(), "note.exploded") {
		t.Errorf("unknown type: %v", err)
	}
	types = types[:2]
	e, err := f.svc.Update(ctx, f.a, ids[0], domain.Patch{Types: &types, Enabled: &off})
	if err != nil || e.Enabled || len(e.Types) != 1 {
		t.Errorf("update: %+v, %v", e, err)
	}
	if err := f.svc.Delete(ctx, f.a, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(ctx, f.a, ids[0]); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleted endpoint: %v", err)
	}
}

// A transport error names its cause, never the URL, whose query may hold
// the receiver's token.
func TestTransportErrorHidesURL(t *testing.T) {
	_, _, err := delivery.SendOnce(context.Background(), (&egress.Guard{AllowPrivate: true}).Client(5*time.Second), "http://127.0.0.1:1/hook?token=s3cret", []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v", err)
	}
}

// The relay passes every event once, in a batch per transaction: an
// account without a matching endpoint gets no delivery and no job, an
// endpoint gets no event written before it existed, and two relays
// running at once (two replicas) neither repeat nor skip an event.
func TestRelayPassesEachEventOnce(t *testing.T) {
	f := newFixture(t, delivery.Options{})
	ctx := context.Background()
	const n = 1200 // more than two batches
	insert := func(account string, count int) {
		if _, err := f.db.Exec(`INSERT INTO events (id, account_id, type, created_at, data)
SELECT 'evt_' || gen_random_uuid(), $1, 'note.created', now(), '{"object":{}}' FROM generate_series(1, $2) g`, account, count); err != nil {
			t.Fatal(err)
		}
	}
	insert(f.b, 1) // before alice's endpoint existed: never delivered
	time.Sleep(10 * time.Millisecond)
	f.endpoint(t, f.a, "http://127.0.0.1:9/hook")
	time.Sleep(10 * time.Millisecond)
	if _, err := f.db.Exec(`INSERT INTO events (id, account_id, type, created_at, data)
SELECT 'evt_a' || g, $1, 'note.created', now(), '{"object":{}}' FROM generate_series(1, $2) g`, f.a, n); err != nil {
		t.Fatal(err)
	}
	insert(f.b, 50)
	var wg sync.WaitGroup
	passed := make([]int, 2)
	for i := range passed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, err := f.queue.RelayOnce(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if k == 0 {
					return
				}
				passed[i] += k
			}
		}()
	}
	wg.Wait()
	if got := passed[0] + passed[1]; got != n+51 {
		t.Errorf("relays passed %d events (%v), want %d", got, passed, n+51)
	}
	var deliveries, distinct int
	if err := f.db.QueryRow("SELECT count(*), count(DISTINCT event_id) FROM webhook_deliveries").Scan(&deliveries, &distinct); err != nil {
		t.Fatal(err)
	}
	if deliveries != n || distinct != n {
		t.Errorf("%d deliveries of %d events, want %d of %d (alice's only, each once)", deliveries, distinct, n, n)
	}
	if jobs := f.jobs(t); jobs != n {
		t.Errorf("%d jobs, want %d", jobs, n)
	}
	if k, err := f.queue.RelayOnce(ctx); err != nil || k != 0 {
		t.Errorf("relay again: %d, %v; want nothing left", k, err)
	}
}
