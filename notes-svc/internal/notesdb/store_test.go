package notesdb_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type fixture struct {
	store *notesdb.Store
	svc   *notes.Service
	a, b  string // account ids
	url   string
	db    *postgres.Pool
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	return newFixtureWith(t, notesdb.PoolOptions{MaxOpenConns: 10})
}

// newFixtureWith is newFixture on a pool of options o.
func newFixtureWith(t testing.TB, o notesdb.PoolOptions) fixture {
	t.Helper()
	url := testenv.DatabaseURL(t)
	db, err := notesdb.Open(url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	store, err := notesdb.New(db)
	if err != nil {
		t.Fatal(err)
	}
	store.SetEventObject(httpapi.NoteObject)
	ctx := context.Background()
	a, err := store.EnsureAccount(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.EnsureAccount(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	return fixture{store: store, svc: notes.NewService(store, nil), a: a, b: b, url: url, db: db}
}

func (f fixture) create(t testing.TB, account string, d notes.Draft) notes.Note {
	t.Helper()
	n, _, err := f.svc.Create(context.Background(), account, d, "")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return n
}

func TestCreateGetRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tags := []string{`quo"te`, `back\slash`, "com,ma", "{brace}", "NULL", "日本語", "emoji 🎉", "  Mixed Case  "}
	n := f.create(t, f.a, notes.Draft{Title: " Hello ", Content: "body\nwith 🎉 and مرحبا and 中文", Tags: tags})
	if !notes.ValidID(n.ID) || n.Version != 1 || n.Title != "Hello" {
		t.Fatalf("created note = %+v", n)
	}
	got, err := f.store.GetNote(ctx, f.a, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`quo"te`, `back\slash`, "com,ma", "{brace}", "null", "日本語", "emoji 🎉", "mixed case"}
	if !slices.Equal(got.Tags, want) {
		t.Errorf("tags = %q, want %q", got.Tags, want)
	}
	if got.Content != n.Content || got.Title != "Hello" || !got.CreatedAt.Equal(n.CreatedAt.Truncate(time.Microsecond)) {
		t.Errorf("got %+v, want %+v", got, n)
	}
	empty := f.create(t, f.a, notes.Draft{Title: "t", Content: ""})
	got, err = f.store.GetNote(ctx, f.a, empty.ID)
	if err != nil || got.Tags == nil || len(got.Tags) != 0 {
		t.Fatalf("note without tags: %+v, %v", got, err)
	}
}

func TestTenantIsolation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	n := f.create(t, f.a, notes.Draft{Title: "secret", Content: "alice only", Tags: []string{"x"}})
	if _, err := f.svc.Get(ctx, f.b, n.ID); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("get as b: %v, want ErrNotFound", err)
	}
	if _, err := f.svc.Replace(ctx, f.b, n.ID, notes.Draft{Title: "pwned", Content: ""}, notes.Condition{}); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("replace as b: %v", err)
	}
	if _, err := f.svc.Patch(ctx, f.b, n.ID, notes.Patch{Title: new("pwned")}, notes.Condition{}); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("patch as b: %v", err)
	}
	if err := f.svc.Delete(ctx, f.b, n.ID, notes.Condition{Present: true, Versions: []int64{1}}); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("delete as b: %v", err)
	}
	var listed []notes.Note
	if err := f.svc.List(ctx, f.b, notes.ListQuery{}, func(n notes.Note) error { listed = append(listed, n); return nil }); err != nil || len(listed) != 0 {
		t.Errorf("list as b = %v, %v", listed, err)
	}
	got, err := f.svc.Get(ctx, f.a, n.ID)
	if err != nil || got.Title != "secret" || got.Content != "alice only" || got.Version != 1 {
		t.Errorf("a's note after b's attempts = %+v, %v", got, err)
	}
}

func TestUpdateConditions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	n := f.create(t, f.a, notes.Draft{Title: "t", Content: "c", Tags: []string{"keep"}})

	u, err := f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "t2", Content: "c2"}, notes.Condition{Present: true, Versions: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if u.Version != 2 || u.Title != "t2" || !slices.Equal(u.Tags, []string{"keep"}) {
		t.Errorf("replace without tags = %+v, want version 2 and tags kept", u)
	}
	if _, err := f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "t3", Content: "c3"}, notes.Condition{Present: true, Versions: []int64{1}}); !errors.Is(err, notes.ErrPreconditionFailed) {
		t.Errorf("stale replace: %v, want ErrPreconditionFailed", err)
	}
	u, err = f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "t3", Content: "c3", Tags: []string{}}, notes.Condition{Present: true, Any: true})
	if err != nil || u.Version != 3 || len(u.Tags) != 0 {
		t.Errorf("replace with tags [] = %+v, %v", u, err)
	}
	p, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{Content: new("patched")}, notes.Condition{})
	if err != nil || p.Content != "patched" || p.Title != "t3" || p.Version != 4 {
		t.Errorf("patch = %+v, %v", p, err)
	}
	if _, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{Title: new("x")}, notes.Condition{Present: true, Versions: []int64{3}}); !errors.Is(err, notes.ErrPreconditionFailed) {
		t.Errorf("stale patch: %v", err)
	}
	if err := f.svc.Delete(ctx, f.a, n.ID, notes.Condition{Present: true, Versions: []int64{3}}); !errors.Is(err, notes.ErrPreconditionFailed) {
		t.Errorf("stale delete: %v", err)
	}
	if err := f.svc.Delete(ctx, f.a, n.ID, notes.Condition{Present: true, Versions: []int64{4}}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := f.svc.Delete(ctx, f.a, n.ID, notes.Condition{}); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "t", Content: ""}, notes.Condition{}); !errors.Is(err, notes.ErrNotFound) {
		t.Errorf("replace deleted: %v", err)
	}
}

func TestConcurrentConditionalUpdatesOneWins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	n := f.create(t, f.a, notes.Draft{Title: "t", Content: "c"})
	const writers = 20
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = f.svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: "w", Content: "c"}, notes.Condition{Present: true, Versions: []int64{1}})
		})
	}
	wg.Wait()
	ok, failed := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, notes.ErrPreconditionFailed):
			failed++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || failed != writers-1 {
		t.Errorf("ok=%d failed=%d, want 1 and %d", ok, failed, writers-1)
	}
	// Patches without If-Match retry on conflict: none is lost.
	for range 10 {
		wg.Go(func() {
			if _, err := f.svc.Patch(ctx, f.a, n.ID, notes.Patch{Content: new("p")}, notes.Condition{}); err != nil {
				t.Errorf("patch: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := f.svc.Get(ctx, f.a, n.ID)
	if err != nil || got.Version != 12 {
		t.Errorf("version after 1 put and 10 patches = %d, %v; want 12", got.Version, err)
	}
}

func collect(t *testing.T, f fixture, account string, q notes.ListQuery) []string {
	t.Helper()
	var titles []string
	err := f.svc.List(context.Background(), account, q, func(n notes.Note) error {
		titles = append(titles, n.Title)
		return nil
	})
	if err != nil {
		t.Fatalf("list %+v: %v", q, err)
	}
	return titles
}

func TestListFilterSortPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := base
	svc := notes.NewService(f.store, func() time.Time { clock = clock.Add(time.Second); return clock })
	mk := func(title, content string, tags ...string) {
		if _, _, err := svc.Create(ctx, f.a, notes.Draft{Title: title, Content: content, Tags: tags}, ""); err != nil {
			t.Fatal(err)
		}
	}
	mk("banana", "Running shoes for the marathon", "sport", "shopping")
	mk("apple", "Quarterly report draft", "work")
	mk("cherry", "Meeting notes about the report", "work", "urgent")
	mk("date", "日本語のメモ", "work", "urgent", "sport")
	f.create(t, f.b, notes.Draft{Title: "bob's", Content: "report", Tags: []string{"work"}})

	cases := []struct {
		name string
		q    notes.ListQuery
		want []string
	}{
		{"all", notes.ListQuery{}, []string{"banana", "apple", "cherry", "date"}},
		{"newest first", notes.ListQuery{Sort: notes.SortCreatedDesc}, []string{"date", "cherry", "apple", "banana"}},
		{"by title", notes.ListQuery{Sort: notes.SortTitle}, []string{"apple", "banana", "cherry", "date"}},
		{"one tag", notes.ListQuery{Tags: []string{"WORK"}}, []string{"apple", "cherry", "date"}},
		{"all tags", notes.ListQuery{Tags: []string{"work", "urgent", "sport"}}, []string{"date"}},
		{"no match tag", notes.ListQuery{Tags: []string{"nope"}}, nil},
		{"search stems", notes.ListQuery{Search: "reports"}, []string{"apple", "cherry"}},
		{"search phrase", notes.ListQuery{Search: `"meeting notes"`}, []string{"cherry"}},
		{"search negation", notes.ListQuery{Search: "report -meeting"}, []string{"apple"}},
		{"search run", notes.ListQuery{Search: "run"}, []string{"banana"}},
		{"search and tag", notes.ListQuery{Search: "report", Tags: []string{"urgent"}}, []string{"cherry"}},
		{"page", notes.ListQuery{Limit: 2, Offset: 1}, []string{"apple", "cherry"}},
		{"page past end", notes.ListQuery{Limit: 2, Offset: 10}, nil},
		{"metacharacters", notes.ListQuery{Search: `'; DROP TABLE notes; -- & | ! ( ) :*`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := collect(t, f, f.a, c.q); !slices.Equal(got, c.want) {
				t.Errorf("titles = %q, want %q", got, c.want)
			}
		})
	}
	n, err := f.svc.Count(ctx, f.a, notes.ListQuery{Tags: []string{"work"}, Limit: 1})
	if err != nil || n != 3 {
		t.Errorf("count = %d, %v; want 3", n, err)
	}
	// Updating moves a note to the end of updated_at order.
	var apple notes.Note
	_ = f.svc.List(ctx, f.a, notes.ListQuery{Tags: []string{"work"}, Limit: 1}, func(n notes.Note) error { apple = n; return nil })
	if _, err := svc.Replace(ctx, f.a, apple.ID, notes.Draft{Title: "apple", Content: "x"}, notes.Condition{}); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f, f.a, notes.ListQuery{Sort: notes.SortUpdatedDesc}); got[0] != "apple" {
		t.Errorf("-updated_at first = %q, want apple", got[0])
	}
	if _, err := f.svc.Count(ctx, f.a, notes.ListQuery{Sort: "id; DROP"}); err == nil {
		t.Error("count accepted a sort outside the whitelist")
	}
}

func TestIdempotentCreate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d := notes.Draft{Title: "once", Content: "c", Tags: []string{"a"}}
	first, replayed, err := f.svc.Create(ctx, f.a, d, "key-1")
	if err != nil || replayed {
		t.Fatalf("first create: %v replayed=%v", err, replayed)
	}
	// Same request after normalization: same note, replayed.
	again, replayed, err := f.svc.Create(ctx, f.a, notes.Draft{Title: " once ", Content: "c", Tags: []string{"A"}}, "key-1")
	if err != nil || !replayed || again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("replay = %+v replayed=%v err=%v, want note %s", again, replayed, err, first.ID)
	}
	if _, _, err := f.svc.Create(ctx, f.a, notes.Draft{Title: "other", Content: "c"}, "key-1"); !errors.Is(err, notes.ErrIdempotencyMismatch) {
		t.Errorf("different body: %v, want ErrIdempotencyMismatch", err)
	}
	// Keys are per account.
	other, replayed, err := f.svc.Create(ctx, f.b, d, "key-1")
	if err != nil || replayed || other.ID == first.ID {
		t.Errorf("same key, other account: %+v replayed=%v err=%v", other, replayed, err)
	}
	var count int64
	count, _ = f.svc.Count(ctx, f.a, notes.ListQuery{})
	if count != 1 {
		t.Errorf("account a holds %d notes, want 1", count)
	}
	// Expired records are removed and then reusable.
	n, err := f.store.DeleteExpiredIdempotencyKeys(ctx, time.Now().Add(25*time.Hour), 100)
	if err != nil || n != 2 {
		t.Errorf("deleted %d expired keys, %v; want 2", n, err)
	}
	fresh, replayed, err := f.svc.Create(ctx, f.a, notes.Draft{Title: "other", Content: "c"}, "key-1")
	if err != nil || replayed || fresh.ID == first.ID {
		t.Errorf("after expiry: %+v replayed=%v err=%v", fresh, replayed, err)
	}
}

func TestIdempotentCreateInFlight(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec := notes.IdempotencyRecord{Key: "busy"}
	// Hold the key's advisory lock from another session, as a running
	// request would.
	tx := testenv.OtherSession(t, f.url)
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", rec.LockID(f.a)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.Create(ctx, f.a, notes.Draft{Title: "t", Content: "c"}, "busy"); !errors.Is(err, notes.ErrIdempotencyInFlight) {
		t.Errorf("create while key in flight: %v, want ErrIdempotencyInFlight", err)
	}
	if _, _, err := f.svc.Create(ctx, f.b, notes.Draft{Title: "t", Content: "c"}, "busy"); err != nil {
		t.Errorf("same key in another account: %v", err)
	}
	_ = tx.Rollback()
	if _, replayed, err := f.svc.Create(ctx, f.a, notes.Draft{Title: "t", Content: "c"}, "busy"); err != nil || replayed {
		t.Errorf("create after the lock is released: replayed=%v err=%v", replayed, err)
	}
}

// timeoutFixture is a fixture whose statements time out after 200 ms,
// with one note of account a. The set-up goes through a pool without the
// tight timeout, so that a busy machine can only slow it down, never fail
// it: the timeouts under test are the caller's alone.
func timeoutFixture(t *testing.T) (fixture, notes.Note) {
	t.Helper()
	f := newFixture(t)
	n := f.create(t, f.a, notes.Draft{Title: "t", Content: "c"})
	fast, err := notesdb.Open(f.url, notesdb.PoolOptions{MaxOpenConns: 2, StatementTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fast.Close() })
	if f.store, err = notesdb.New(fast); err != nil {
		t.Fatal(err)
	}
	f.store.SetEventObject(httpapi.NoteObject)
	f.svc, f.db = notes.NewService(f.store, nil), fast
	return f, n
}

func TestStatementTimeoutIsErrTimeout(t *testing.T) {
	f, n := timeoutFixture(t)
	ctx, svc, acct := context.Background(), f.svc, f.a
	// Another session holds the row lock, so the update waits until the
	// statement timeout cancels it.
	tx := testenv.OtherSession(t, f.url)
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM notes WHERE id = $1 FOR UPDATE", n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Replace(ctx, acct, n.ID, notes.Draft{Title: "x", Content: ""}, notes.Condition{}); !errors.Is(err, notes.ErrTimeout) {
		t.Errorf("update of a locked row: %v, want ErrTimeout", err)
	}
}

// TestHandWrittenStatementsTimeOut covers the statements that run on the
// pgx connection directly: a statement timeout and a cancelled context are
// both ErrTimeout, and the pool stays usable afterwards.
func TestHandWrittenStatementsTimeOut(t *testing.T) {
	f, n := timeoutFixture(t)
	ctx, svc, acct := context.Background(), f.svc, f.a
	tx := testenv.OtherSession(t, f.url)
	if _, err := tx.ExecContext(ctx, "LOCK TABLE notes IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, acct, n.ID); !errors.Is(err, notes.ErrTimeout) {
		t.Errorf("get under a table lock: %v, want ErrTimeout", err)
	}
	if _, _, err := svc.Create(ctx, acct, notes.Draft{Title: "t2", Content: "c"}, ""); !errors.Is(err, notes.ErrTimeout) {
		t.Errorf("create under a table lock: %v, want ErrTimeout", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := svc.Get(short, acct, n.ID)
	cancel()
	if !errors.Is(err, notes.ErrTimeout) {
		t.Errorf("get past its context deadline: %v, want ErrTimeout", err)
	}
	_ = tx.Rollback()
	for i := 0; i < 3; i++ { // more than the pool holds: every connection is reused
		if got, err := svc.Get(ctx, acct, n.ID); err != nil || got.Title != "t" {
			t.Fatalf("get after the lock is released: %+v, %v", got, err)
		}
		if _, _, err := svc.Create(ctx, acct, notes.Draft{Title: "t3", Content: "c"}, ""); err != nil {
			t.Fatalf("create after the lock is released: %v", err)
		}
	}
}

func TestUnreachableDatabaseIsErrUnavailable(t *testing.T) {
	db, err := notesdb.Open("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", notesdb.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := notesdb.New(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Ping(context.Background()); !errors.Is(err, notes.ErrUnavailable) {
		t.Errorf("ping: %v, want ErrUnavailable", err)
	}
	if _, err := store.GetNote(context.Background(), "acct", "note"); !errors.Is(err, notes.ErrUnavailable) {
		t.Errorf("get: %v, want ErrUnavailable", err)
	}
	if _, err := store.LookupKey(context.Background(), auth.Hash{}); !errors.Is(err, notes.ErrUnavailable) {
		t.Errorf("lookup key: %v, want ErrUnavailable", err)
	}
}
