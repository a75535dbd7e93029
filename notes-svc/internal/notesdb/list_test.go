package notesdb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// tiedNotes creates 40 notes of account a with ties on every sort key:
// created_at in groups of three, five titles (two differ only in case),
// and updated_at in groups of two among the notes updated later. b gets
// notes too, which no listing of a may show.
func tiedNotes(t *testing.T, f fixture) {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var clock time.Time
	svc := notes.NewService(f.store, func() time.Time { return clock })
	titles := []string{"alpha", "beta", "Beta", "gamma", "alpha"}
	var created []notes.Note
	for i := range 40 {
		clock = base.Add(time.Duration(i/3) * time.Second)
		content := "memo"
		if i%2 == 0 {
			content = "quarterly report"
		}
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		if i%3 == 0 {
			tags = append(tags, "three")
		}
		n, _, err := svc.Create(ctx, f.a, notes.Draft{Title: titles[i%len(titles)], Content: content, Tags: tags}, "")
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, n)
		if i%7 == 0 {
			f.create(t, f.b, notes.Draft{Title: "alpha", Content: "quarterly report", Tags: []string{"all", "even"}})
		}
	}
	for i, n := range created {
		if i%4 != 0 {
			continue
		}
		clock = base.Add(time.Hour + time.Duration(i/8)*time.Second)
		if _, err := svc.Replace(ctx, f.a, n.ID, notes.Draft{Title: n.Title, Content: n.Content + " revised"}, notes.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
}

// referenceIDs lists what q selects with one plain statement, written
// independently of the store's statement builder.
func referenceIDs(t *testing.T, f fixture, account string, q notes.ListQuery) []string {
	t.Helper()
	// Each key is a column of its name, and id breaks ties the last key's
	// way (the domain accepts only its sort fields).
	order := ""
	dir := ""
	for _, k := range q.Sort.Keys() {
		dir = ""
		if k.Desc {
			dir = " DESC"
		}
		order += k.Field + dir + ", "
	}
	order += "id" + dir
	query := "SELECT id FROM notes WHERE account_id = $1 AND tags @> $2::text[] AND ($3 = '' OR search @@ websearch_to_tsquery('english', $3)) ORDER BY " + order
	if q.Limit > 0 {
		query += " LIMIT " + strconv.Itoa(q.Limit)
	}
	query += " OFFSET " + strconv.Itoa(q.Offset)
	tags := q.Tags
	if tags == nil {
		tags = []string{}
	}
	rows, err := f.db.QueryContext(context.Background(), query, account, tags, q.Search)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func listWith(t *testing.T, store *notesdb.Store, account string, q notes.ListQuery) []notes.Note {
	t.Helper()
	var out []notes.Note
	if err := store.ListNotes(context.Background(), account, q, func(n notes.Note) error { out = append(out, n); return nil }); err != nil {
		t.Fatalf("list %+v: %v", q, err)
	}
	return out
}

// TestBatchedListingMatchesOneStatement: however a listing is cut into
// batches (by rows, or early by bytes), it returns exactly the notes one
// statement returns, in the same order, for every sort, filter and page,
// ties on every sort key included.
func TestBatchedListingMatchesOneStatement(t *testing.T) {
	f := newFixture(t)
	tiedNotes(t, f)
	whole, err := notesdb.New(f.db)
	if err != nil {
		t.Fatal(err)
	}
	whole.SetListBatch(notesdb.ListBatch{Rows: 100000, Bytes: 1 << 30})
	batchings := []notesdb.ListBatch{{Rows: 1}, {Rows: 2}, {Rows: 3}, {Rows: 7}, {Rows: 500, Bytes: 1}, {Rows: 4, Bytes: 300}}
	stores := make([]*notesdb.Store, len(batchings))
	for i, b := range batchings {
		if stores[i], err = notesdb.New(f.db); err != nil {
			t.Fatal(err)
		}
		stores[i].SetListBatch(b)
	}
	filters := []notes.ListQuery{{}, {Tags: []string{"even"}}, {Tags: []string{"even", "three"}}, {Search: "report"},
		{Search: "report", Tags: []string{"three"}}, {Search: "revised -report"}, {Tags: []string{"none"}}}
	pages := [][2]int{{0, 0}, {0, 5}, {7, 0}, {7, 4}, {1000, 3}, {0, 39}, {3, 100}}
	checked := 0
	for _, srt := range notes.Sorts {
		for _, flt := range filters {
			for _, pg := range pages {
				q := notes.ListQuery{Sort: srt, Tags: flt.Tags, Search: flt.Search, Limit: pg[0], Offset: pg[1]}
				want := listWith(t, whole, f.a, q)
				ref := referenceIDs(t, f, f.a, q)
				ids := make([]string, len(want))
				for i, n := range want {
					ids[i] = n.ID
				}
				if !slices.Equal(ids, ref) {
					t.Fatalf("%+v: one statement gives %v, the reference %v", q, ids, ref)
				}
				for i, store := range stores {
					got := listWith(t, store, f.a, q)
					if !slices.EqualFunc(got, want, func(a, b notes.Note) bool {
						return a.ID == b.ID && a.Title == b.Title && a.Content == b.Content && slices.Equal(a.Tags, b.Tags) &&
							a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) && a.Version == b.Version && a.AccountID == f.a
					}) {
						t.Errorf("%+v in batches %+v: %d notes differ from one statement's %d", q, batchings[i], len(got), len(want))
					}
				}
				checked++
			}
		}
	}
	// The fixture really has ties, and the cases select something.
	if all := referenceIDs(t, f, f.a, notes.ListQuery{Sort: notes.SortCreatedAsc}); len(all) != 40 {
		t.Fatalf("fixture has %d notes, want 40", len(all))
	}
	var ties int
	if err := f.db.QueryRow(`SELECT count(*) FROM (SELECT created_at FROM notes WHERE account_id = $1 GROUP BY created_at HAVING count(*) > 1) x`, f.a).Scan(&ties); err != nil || ties < 10 {
		t.Fatalf("created_at ties: %d, %v", ties, err)
	}
	t.Logf("%d queries × %d batchings", checked, len(batchings))
}

// TestBatchedListingHoldsNoConnection: the callback of a listing, which
// writes to the client, runs with every connection back in the pool.
func TestBatchedListingHoldsNoConnection(t *testing.T) {
	f := newFixture(t)
	for i := range 9 {
		f.create(t, f.a, notes.Draft{Title: fmt.Sprint("n", i), Content: "c"})
	}
	for _, b := range []notesdb.ListBatch{{Rows: 2}, {Rows: 500, Bytes: 1}, {}} {
		f.store.SetListBatch(b)
		for _, q := range []notes.ListQuery{{}, {Sort: notes.SortTitle, Limit: 5, Offset: 1}, {Search: "c"}} {
			seen := 0
			err := f.svc.List(context.Background(), f.a, q, func(notes.Note) error {
				seen++
				if n := f.db.PGX.Stat().AcquiredConns(); n != 0 {
					return fmt.Errorf("%d connections in use while note %d is handed out", n, seen)
				}
				return nil
			})
			if err != nil || seen == 0 {
				t.Errorf("batches %+v, %+v: %d notes, %v", b, q, seen, err)
			}
		}
	}
}

// TestBatchedListingUnderConcurrentWrites pins down what docs/API.md
// promises an unbounded listing in created_at order while notes are
// created, deleted and edited between its batches: every note that exists
// throughout appears exactly once, in order; a deleted note not yet sent
// is left out; a note created ahead of the listing's position appears,
// one created behind it does not; and nothing appears twice.
func TestBatchedListingUnderConcurrentWrites(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var clock time.Time
	svc := notes.NewService(f.store, func() time.Time { return clock })
	var all []notes.Note
	for i := range 12 {
		clock = base.Add(time.Duration(i/2) * time.Second) // pairs tie
		n, _, err := svc.Create(ctx, f.a, notes.Draft{Title: fmt.Sprint("n", i), Content: "c"}, "")
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, n)
	}
	f.store.SetListBatch(notesdb.ListBatch{Rows: 3})
	var got []string
	var ahead, behind notes.Note
	err := f.svc.List(ctx, f.a, notes.ListQuery{}, func(n notes.Note) error {
		got = append(got, n.ID+" "+n.Title)
		if len(got) != 4 { // the first note of the second batch
			return nil
		}
		if err := f.svc.Delete(ctx, f.a, all[9].ID, notes.Condition{}); err != nil {
			return err
		}
		clock = base.Add(time.Minute)
		if _, err := svc.Replace(ctx, f.a, all[8].ID, notes.Draft{Title: "edited", Content: "c"}, notes.Condition{}); err != nil {
			return err
		}
		if _, err := svc.Replace(ctx, f.a, all[0].ID, notes.Draft{Title: "edited too late", Content: "c"}, notes.Condition{}); err != nil {
			return err
		}
		var err error
		if ahead, _, err = svc.Create(ctx, f.a, notes.Draft{Title: "ahead", Content: "c"}, ""); err != nil {
			return err
		}
		clock = base.Add(-time.Minute)
		behind, _, err = svc.Create(ctx, f.a, notes.Draft{Title: "behind", Content: "c"}, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, n := range all {
		switch i {
		case 9:
			continue
		case 8:
			want = append(want, n.ID+" edited")
		default:
			want = append(want, n.ID+" "+n.Title)
		}
	}
	want = append(want, ahead.ID+" ahead")
	if !slices.Equal(got, want) {
		t.Errorf("listing under writes:\n got %s\nwant %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	if slices.Contains(got, behind.ID+" behind") {
		t.Error("a note created behind the listing's position appeared")
	}
}

// TestListLimiterGatesUnboundedListings: the Service takes a limiter slot
// for an unbounded listing only, refuses the account's excess with
// ErrTooManyListings and the process's with ErrListingsBusy, and gives
// the slot back however the listing ends.
func TestListLimiterGatesUnboundedListings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 3 {
		f.create(t, f.a, notes.Draft{Title: fmt.Sprint("a", i), Content: "c"})
		f.create(t, f.b, notes.Draft{Title: fmt.Sprint("b", i), Content: "c"})
	}
	limiter := notes.NewListLimiter(1, 1, 0)
	svc := notes.NewService(f.store, nil).WithListLimiter(limiter)
	count := func(account string, q notes.ListQuery) (int, error) {
		n := 0
		err := svc.List(ctx, account, q, func(notes.Note) error { n++; return nil })
		return n, err
	}
	var inside []error
	err := svc.List(ctx, f.a, notes.ListQuery{}, func(notes.Note) error {
		if len(inside) > 0 {
			return nil
		}
		_, err := count(f.a, notes.ListQuery{Sort: notes.SortTitle})
		inside = append(inside, err)
		_, err = count(f.a, notes.ListQuery{Offset: 1})
		inside = append(inside, err)
		_, err = count(f.b, notes.ListQuery{})
		inside = append(inside, err)
		n, err := count(f.a, notes.ListQuery{Limit: 10})
		if err == nil && n != 3 {
			err = fmt.Errorf("paged listing gave %d notes", n)
		}
		inside = append(inside, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []error{notes.ErrTooManyListings, notes.ErrTooManyListings, notes.ErrListingsBusy, nil}
	for i, w := range want {
		if !errors.Is(inside[i], w) || (w == nil && inside[i] != nil) {
			t.Errorf("listing %d during an unbounded one: %v, want %v", i, inside[i], w)
		}
	}
	if a, b := limiter.Refused(); a != 2 || b != 1 {
		t.Errorf("refused %d by account, %d busy; want 2 and 1", a, b)
	}
	// A listing that fails half way gives its slot back too.
	stop := errors.New("client left")
	if err := svc.List(ctx, f.b, notes.ListQuery{}, func(notes.Note) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("aborted listing: %v", err)
	}
	if n, err := count(f.b, notes.ListQuery{}); err != nil || n != 3 || limiter.InProgress() != 0 {
		t.Errorf("after the listings ended: %d notes, %v, %d slots in use", n, err, limiter.InProgress())
	}
}
