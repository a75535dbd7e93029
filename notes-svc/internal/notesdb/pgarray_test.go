package notesdb

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// FuzzParseTextArray holds parseTextArray to pgx's parser: whatever tags
// pgx writes in text form, it reads back the same, or leaves to pgx.
func FuzzParseTextArray(f *testing.F) {
	for _, seed := range [][2]string{{"research", "q3"}, {"", "a b"}, {`quo"te`, `back\slash`}, {"NULL", "null"},
		{"{brace}", "com,ma"}, {"tab\there", "ünïcødé"}, {"x", ""}} {
		f.Add(seed[0], seed[1], 2)
	}
	m := pgtype.NewMap()
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		in := []string{a, b, a + b}[:max(0, min(n, 3))]
		src, err := m.Encode(pgtype.TextArrayOID, pgtype.TextFormatCode, in, nil)
		if err != nil {
			t.Skip() // not text PostgreSQL could hold (invalid UTF-8)
		}
		got, ok := parseTextArray(src)
		if !ok {
			t.Fatalf("%s: not read", src)
		}
		if !slices.Equal(got, in) || got == nil {
			t.Fatalf("%s: read %q, want %q", src, got, in)
		}
	})
}

// TestParseTextArrayLeavesOtherForms checks that a form parseTextArray
// does not read (bounds, two dimensions, NULL, a malformed literal) is
// left to pgx's parser rather than misread.
func TestParseTextArrayLeavesOtherForms(t *testing.T) {
	for _, src := range []string{`[0:1]={a,b}`, `{{a,b},{c,d}}`, `{a,NULL}`, `{a,}`, `{"a}`, `{a b}`, `a`, `{`, `{,}`} {
		if got, ok := parseTextArray([]byte(src)); ok {
			t.Errorf("%s: read as %q, want it left to pgx", src, got)
		}
	}
	for src, want := range map[string][]string{`{}`: {}, `{a}`: {"a"}, `{"a b",c}`: {"a b", "c"}, `{"x\\\"y"}`: {`x\"y`}, `{""}`: {""}} {
		if got, ok := parseTextArray([]byte(src)); !ok || !slices.Equal(got, want) {
			t.Errorf("%s: read %q (%v), want %q", src, got, ok, want)
		}
	}
}
