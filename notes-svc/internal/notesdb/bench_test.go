package notesdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// benchFixture is a fresh database holding one note of about 600 bytes.
func benchFixture(b *testing.B) (fixture, notes.Note) {
	b.Helper()
	f := newFixture(b)
	n, _, err := f.svc.Create(context.Background(), f.a, notes.Draft{Title: "Quarterly review",
		Content: strings.Repeat("Quarterly revenue grew while margins held. ", 12), Tags: []string{"research", "q3"}}, "")
	if err != nil {
		b.Fatal(err)
	}
	return f, n
}

// BenchmarkGetNote is one primary-key read through the store, on one
// connection at a time: the round trip to PostgreSQL included.
func BenchmarkGetNote(b *testing.B) {
	f, n := benchFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.store.GetNote(ctx, f.a, n.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateNote inserts notes of about 600 bytes through the store,
// every index maintained; making the id is included (BenchmarkNewID).
func BenchmarkCreateNote(b *testing.B) {
	f, n := benchFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, err := notes.NewID()
		if err != nil {
			b.Fatal(err)
		}
		n.ID = id
		if _, _, err := f.store.CreateNote(ctx, n, nil); err != nil {
			b.Fatal(err)
		}
	}
}
