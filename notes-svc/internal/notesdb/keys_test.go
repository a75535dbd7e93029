package notesdb_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// TestAccountKeysFindWhatThePlainConditionsFind: listings and counts find
// notes through the account-qualified keys of migration 00002 (tags and
// search lexemes prefixed by the account), with the plain conditions
// beside them. A key the renaming got wrong would drop a note that the
// plain condition alone selects, so every query is checked against a
// statement with the plain conditions only, on notes whose lexemes carry
// quotes, parentheses and "!" (URL paths), with a word too long for a
// prefixed key (which must not fail the insert), and with the same tags
// and words in another account. Phrases, "or" and negation are among the
// queries that select notes.
func TestAccountKeysFindWhatThePlainConditionsFind(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("z", 2040) // a lexeme over the keys' 2,000-byte bound
	drafts := []notes.Draft{
		{Title: "dividend yield", Content: "see http://x.example/a('b!'c and http://x.example/a(b!c for the dividend policy", Tags: []string{"research", "a:b"}},
		{Title: "yield curve", Content: "the dividend was cut; no yield " + long, Tags: []string{"research"}},
		{Title: "bond ladder", Content: "treasury bond notes, don't panic", Tags: []string{"finance", "it's"}},
		{Title: "empty", Content: "nothing here", Tags: []string{}},
	}
	for _, d := range drafts {
		f.create(t, f.a, d)
		f.create(t, f.b, d) // the same keys in another account
	}
	queries := []notes.ListQuery{
		{Tags: []string{"research"}}, {Tags: []string{"research", "a:b"}}, {Tags: []string{"it's"}}, {Tags: []string{"b"}},
		{Search: "dividend"}, {Search: `"dividend yield"`}, {Search: "dividend -yield"}, {Search: "bond or curve"},
		{Search: "http://x.example/a('b!'c"}, {Search: "x.example/a(b!c"}, {Search: "don't"}, {Search: "-dividend"}, {Search: "the"},
		{Search: "dividend", Tags: []string{"research"}}, {Search: `'; DROP TABLE notes; -- & | ! ( ) :*`},
	}
	ctx := context.Background()
	matched := 0
	for _, q := range queries {
		q.Sort = notes.SortCreatedAsc
		want := referenceIDs(t, f, f.a, q)
		var got []string
		for _, n := range listWith(t, f.store, f.a, q) {
			got = append(got, n.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: listed %v, the plain conditions select %v", q, got, want)
		}
		n, err := f.store.CountNotes(ctx, f.a, q)
		if err != nil {
			t.Fatalf("count %+v: %v", q, err)
		}
		if n != int64(len(want)) {
			t.Errorf("%+v: counted %d, want %d", q, n, len(want))
		}
		if len(want) > 0 {
			matched++
		}
	}
	if matched < 8 {
		t.Fatalf("only %d of %d queries select anything: the check proves little", matched, len(queries))
	}
}
