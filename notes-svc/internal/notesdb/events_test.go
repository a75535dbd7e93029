package notesdb_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// feed reads the whole event feed of account after after.
func (f fixture) feed(t *testing.T, account string, after int64) []notes.Event {
	t.Helper()
	var out []notes.Event
	for {
		evs, more, err := f.store.ListEvents(context.Background(), account, notes.EventQuery{After: after, Limit: 2})
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		out = append(out, evs...)
		if !more {
			return out
		}
		after = evs[len(evs)-1].Seq
	}
}

func types(evs []notes.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// object decodes an event's data.object.
func object(t *testing.T, ev notes.Event) map[string]any {
	t.Helper()
	var d struct{ Object map[string]any }
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatalf("event data %s: %v", ev.Data, err)
	}
	return d.Object
}

func TestEveryChangeWritesItsEvent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	n := f.create(t, f.a, notes.Draft{Title: "first", Content: "c"})
	if _, err := f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "second", Content: "c"}, notes.Condition{}); err != nil {
		t.Fatal(err)
	}
	title := "third"
	if _, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{Title: &title}, notes.Condition{}); err != nil {
		t.Fatal(err)
	}
	// An empty patch changes nothing, and logs nothing.
	if _, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{}, notes.Condition{}); err != nil {
		t.Fatal(err)
	}
	trashed, err := f.svc.Trash(ctx, f.a, n.ID)
	if err != nil || trashed.TrashedAt == nil {
		t.Fatalf("trash: %+v %v", trashed, err)
	}
	// A second trash is a no-op: same note, same version, no event.
	again, err := f.svc.Trash(ctx, f.a, n.ID)
	if err != nil || again.Version != trashed.Version || again.TrashedAt == nil || !again.TrashedAt.Equal(*trashed.TrashedAt) {
		t.Fatalf("trash again: %+v %v, first %+v", again, err, trashed)
	}
	restored, err := f.svc.Restore(ctx, f.a, n.ID)
	if err != nil || restored.TrashedAt != nil || restored.Version != trashed.Version+1 {
		t.Fatalf("restore: %+v %v", restored, err)
	}
	if again, err := f.svc.Restore(ctx, f.a, n.ID); err != nil || again.Version != restored.Version {
		t.Fatalf("restore again: %+v %v", again, err)
	}
	if err := f.svc.Delete(ctx, f.a, n.ID, notes.Condition{}); err != nil {
		t.Fatal(err)
	}
	other := f.create(t, f.b, notes.Draft{Title: "bob's", Content: "c"})

	evs := f.feed(t, f.a, 0)
	want := []string{notes.EventNoteCreated, notes.EventNoteUpdated, notes.EventNoteUpdated, notes.EventNoteTrashed, notes.EventNoteRestored, notes.EventNoteDeleted}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("alice's events = %v, want %v", got, want)
	}
	titles := []any{"first", "second", "third", "third", "third"}
	for i, ev := range evs {
		obj := object(t, ev)
		if obj["id"] != n.ID || ev.AccountID != f.a || !strings.HasPrefix(ev.ID, notes.EventIDPrefix) {
			t.Errorf("event %d = %+v, object %v", i, ev, obj)
		}
		if i > 0 && ev.Seq <= evs[i-1].Seq {
			t.Errorf("event %d seq %d after %d", i, ev.Seq, evs[i-1].Seq)
		}
		if i < len(titles) && obj["title"] != titles[i] {
			t.Errorf("event %d (%s) object title = %v, want %v", i, ev.Type, obj["title"], titles[i])
		}
	}
	if obj := object(t, evs[3]); obj["trashed_at"] == nil {
		t.Errorf("the trash event's note has no trashed_at: %v", obj)
	}
	if obj := object(t, evs[5]); len(obj) != 1 {
		t.Errorf("the delete event's object = %v, want the id alone", obj)
	}
	// Bob sees his own event only.
	if got := f.feed(t, f.b, 0); len(got) != 1 || object(t, got[0])["id"] != other.ID {
		t.Errorf("bob's feed = %v", types(got))
	}
	// The types filter keeps the asked types, in order.
	evs, _, err = f.store.ListEvents(ctx, f.a, notes.EventQuery{Types: []string{notes.EventNoteUpdated, notes.EventNoteDeleted}, Limit: 10})
	if got := types(evs); err != nil || !slices.Equal(got, []string{notes.EventNoteUpdated, notes.EventNoteUpdated, notes.EventNoteDeleted}) {
		t.Errorf("filtered feed = %v, %v", got, err)
	}
}

func TestTrashedNotesRefuseEditsAndLeaveListings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	kept := f.create(t, f.a, notes.Draft{Title: "kept", Content: "c"})
	n := f.create(t, f.a, notes.Draft{Title: "binned", Content: "c"})
	if _, err := f.svc.Trash(ctx, f.a, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "x", Content: "c"}, notes.Condition{}); !errors.Is(err, notes.ErrTrashed) {
		t.Errorf("replace a trashed note: %v", err)
	}
	title := "x"
	if _, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{Title: &title}, notes.Condition{}); !errors.Is(err, notes.ErrTrashed) {
		t.Errorf("patch a trashed note: %v", err)
	}
	// Another account's note is not found, trashed or not.
	if _, err := f.svc.Trash(ctx, f.b, n.ID); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("bob trashes alice's note: %v", err)
	}
	if _, err := f.svc.Restore(ctx, f.b, n.ID); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("bob restores alice's note: %v", err)
	}
	if got, err := f.svc.Get(ctx, f.a, n.ID); err != nil || got.TrashedAt == nil {
		t.Errorf("get a trashed note: %+v %v", got, err)
	}
	ids := func(q notes.ListQuery) []string {
		var out []string
		if err := f.svc.List(ctx, f.a, q, func(n notes.Note) error { out = append(out, n.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		c, err := f.svc.Count(ctx, f.a, q)
		if err != nil || c != int64(len(out)) {
			t.Errorf("count %d, %v; listed %d", c, err, len(out))
		}
		return out
	}
	if got := ids(notes.ListQuery{}); !slices.Equal(got, []string{kept.ID}) {
		t.Errorf("listing = %v, want only %s", got, kept.ID)
	}
	if got := ids(notes.ListQuery{Trashed: true}); !slices.Equal(got, []string{n.ID}) {
		t.Errorf("trashed listing = %v, want only %s", got, n.ID)
	}
	// A trashed note can still be deleted for good.
	if err := f.svc.Delete(ctx, f.a, n.ID, notes.Condition{}); err != nil {
		t.Errorf("delete a trashed note: %v", err)
	}
}

// begin starts a transaction the test ends, rolled back if it does not.
func (f fixture) begin(t *testing.T) *sql.Tx {
	t.Helper()
	tx, err := f.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// insertEvent writes an event of account a in tx and returns its seq.
func (f fixture) insertEvent(t *testing.T, tx *sql.Tx, id string) int64 {
	t.Helper()
	var seq int64
	if err := tx.QueryRow(`INSERT INTO events (id, account_id, type, created_at, data) VALUES ($1, $2, 'note.created', now(), '{"object":{}}') RETURNING seq`,
		id, f.a).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// TestFeedNeverSkipsAnEvent: seq is taken at insert, not at commit, and
// an xid at a transaction's first write, so neither order alone is that
// of commits. In each interleaving the transaction holding the higher seq
// commits first; a reader that went on past it before the other commits
// must still see the other's event after its cursor, once.
//
//   - late commit: the lower seq's transaction also has the lower xid; the
//     feed shows neither until both have committed.
//   - older xid, higher seq: a transaction takes its xid before another
//     but its seq after it. A feed in seq order would show it and move the
//     cursor past the other's lower seq for good; in (xid, seq) order the
//     other comes after the cursor.
func TestFeedNeverSkipsAnEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		// events writes the lower and the higher seq in their transactions.
		events    func(t *testing.T, f fixture) (low, high int64, lowTx, highTx *sql.Tx)
		firstSeen func(low, high int64) []int64
	}{
		{"late commit", func(t *testing.T, f fixture) (int64, int64, *sql.Tx, *sql.Tx) {
			first, second := f.begin(t), f.begin(t)
			return f.insertEvent(t, first, "evt_low"), f.insertEvent(t, second, "evt_high"), first, second
		}, func(int64, int64) []int64 { return nil }},
		{"older xid, higher seq", func(t *testing.T, f fixture) (int64, int64, *sql.Tx, *sql.Tx) {
			older := f.begin(t)
			if _, err := older.Exec("SELECT pg_current_xact_id()"); err != nil {
				t.Fatal(err)
			}
			younger := f.begin(t)
			low := f.insertEvent(t, younger, "evt_younger")
			return low, f.insertEvent(t, older, "evt_older"), younger, older
		}, func(_, high int64) []int64 { return []int64{high} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			low, high, lowTx, highTx := tc.events(t, f)
			if low >= high {
				t.Fatalf("seqs %d, %d: want the first insert's lower", low, high)
			}
			if err := highTx.Commit(); err != nil {
				t.Fatal(err)
			}
			var seen []int64
			var after int64
			for _, ev := range f.feed(t, f.a, 0) {
				seen, after = append(seen, ev.Seq), ev.Seq
			}
			if want := tc.firstSeen(low, high); !slices.Equal(seen, want) {
				t.Fatalf("feed while seq %d is uncommitted = %v, want %v", low, seen, want)
			}
			if err := lowTx.Commit(); err != nil {
				t.Fatal(err)
			}
			for _, ev := range f.feed(t, f.a, after) {
				seen = append(seen, ev.Seq)
			}
			if slices.Sort(seen); !slices.Equal(seen, []int64{low, high}) {
				t.Fatalf("feed over the two commits = %v, want %d and %d once each", seen, low, high)
			}
		})
	}
}

func TestEventCursorExpires(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.create(t, f.a, notes.Draft{Title: "a", Content: "c"})
	f.create(t, f.a, notes.Draft{Title: "b", Content: "c"})
	evs := f.feed(t, f.a, 0)
	if len(evs) != 2 {
		t.Fatalf("feed = %v", types(evs))
	}
	q := func(after int64, horizon time.Time) error {
		_, _, err := f.store.ListEvents(ctx, f.a, notes.EventQuery{After: after, Limit: 10, Horizon: horizon})
		return err
	}
	if err := q(evs[0].Seq, time.Now().Add(-time.Hour)); err != nil {
		t.Fatalf("a fresh cursor: %v", err)
	}
	// Past the horizon, whether pruned yet or not.
	if err := q(evs[0].Seq, time.Now().Add(time.Hour)); !errors.Is(err, notes.ErrCursorExpired) {
		t.Errorf("a cursor before the horizon: %v", err)
	}
	// Another account's cursor is no cursor of this one.
	if _, _, err := f.store.ListEvents(ctx, f.b, notes.EventQuery{After: evs[0].Seq, Limit: 10}); !errors.Is(err, notes.ErrCursorExpired) {
		t.Errorf("alice's cursor in bob's feed: %v", err)
	}
	if _, err := f.db.ExecContext(ctx, `UPDATE events SET created_at = now() - interval '40 days' WHERE seq = $1`, evs[0].Seq); err != nil {
		t.Fatal(err)
	}
	pruned, err := f.store.PruneEvents(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil || pruned != 1 {
		t.Fatalf("prune = %d, %v", pruned, err)
	}
	if err := q(evs[0].Seq, time.Time{}); !errors.Is(err, notes.ErrCursorExpired) {
		t.Errorf("a cursor whose event was pruned: %v", err)
	}
	if err := q(0, time.Time{}); err != nil {
		t.Errorf("the start of the feed: %v", err)
	}
}

func TestPruneEventsInBatches(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// More than one batch of old events, and one recent.
	if _, err := f.db.ExecContext(ctx, `INSERT INTO events (id, account_id, type, created_at, data)
		SELECT 'evt_old' || i, $1, 'note.created', now() - interval '40 days', '{"object":{}}' FROM generate_series(1, 1234) i`, f.a); err != nil {
		t.Fatal(err)
	}
	f.create(t, f.a, notes.Draft{Title: "recent", Content: "c"})
	n, err := f.store.PruneEvents(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil || n != 1234 {
		t.Fatalf("pruned %d, %v; want 1234", n, err)
	}
	if evs := f.feed(t, f.a, 0); len(evs) != 1 || evs[0].Type != notes.EventNoteCreated {
		t.Errorf("left %v", types(evs))
	}
}

func TestPurgeTrash(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// More than one batch of notes long in the trash, bob's among them.
	if _, err := f.db.ExecContext(ctx, `INSERT INTO notes (id, account_id, title, content, created_at, updated_at, trashed_at)
		SELECT 'note_0' || lpad(i::text, 25, '0'), CASE WHEN i % 2 = 0 THEN $1 ELSE $2 END, 't', 'c', now(), now(), now() - interval '40 days'
		FROM generate_series(1, 1100) i`, f.a, f.b); err != nil {
		t.Fatal(err)
	}
	recent := f.create(t, f.a, notes.Draft{Title: "recently trashed", Content: "c"})
	if _, err := f.svc.Trash(ctx, f.a, recent.ID); err != nil {
		t.Fatal(err)
	}
	live := f.create(t, f.a, notes.Draft{Title: "live", Content: "c"})
	before := f.feed(t, f.a, 0)
	n, err := f.store.PurgeTrash(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil || n != 1100 {
		t.Fatalf("purged %d, %v; want 1100", n, err)
	}
	for _, id := range []string{recent.ID, live.ID} {
		if _, err := f.store.GetNote(ctx, f.a, id); err != nil {
			t.Errorf("note %s: %v", id, err)
		}
	}
	var left int64
	if err := f.db.QueryRowContext(ctx, `SELECT count(*) FROM notes`).Scan(&left); err != nil || left != 2 {
		t.Errorf("%d notes left, %v; want 2", left, err)
	}
	// Each purged note has its note.deleted event, in its own account.
	for account, want := range map[string]int{f.a: 550, f.b: 550} {
		evs, _, err := f.store.ListEvents(ctx, account, notes.EventQuery{Types: []string{notes.EventNoteDeleted}, Limit: 1000})
		if err != nil || len(evs) != want {
			t.Errorf("account %s: %d note.deleted events, %v; want %d", account, len(evs), err, want)
		}
	}
	if after := f.feed(t, f.a, 0); len(after) != len(before)+550 {
		t.Errorf("alice's feed grew from %d to %d events", len(before), len(after))
	}
}
