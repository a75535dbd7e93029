package notes

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

func fieldsOf(err error) []string {
	var verr *fielderr.List
	if !errors.As(err, &verr) {
		return nil
	}
	var out []string
	for _, f := range verr.Fields {
		out = append(out, f.Name)
	}
	return out
}

func TestDraftNormalize(t *testing.T) {
	cases := []struct {
		name       string
		d          Draft
		wantFields []string
		wantTitle  string
		wantTags   []string
	}{
		{"minimal", Draft{Title: "t"}, nil, "t", nil},
		{"trimmed title", Draft{Title: "  hi \t"}, nil, "hi", nil},
		{"blank title", Draft{Title: "   "}, []string{"title"}, "", nil},
		{"title at limit", Draft{Title: strings.Repeat("é", MaxTitleChars)}, nil, strings.Repeat("é", MaxTitleChars), nil},
		{"title over limit", Draft{Title: strings.Repeat("a", MaxTitleChars+1)}, []string{"title"}, "", nil},
		{"title newline", Draft{Title: "a\nb"}, []string{"title"}, "", nil},
		{"title NUL", Draft{Title: "a\x00b"}, []string{"title"}, "", nil},
		{"title bad utf8", Draft{Title: "a\xffb"}, []string{"title"}, "", nil},
		{"content at limit", Draft{Title: "t", Content: strings.Repeat("a", MaxContentLen)}, nil, "t", nil},
		{"content over limit", Draft{Title: "t", Content: strings.Repeat("a", MaxContentLen+1)}, []string{"content"}, "", nil},
		{"content NUL", Draft{Title: "t", Content: "a\x00"}, []string{"content"}, "", nil},
		{"content bad utf8", Draft{Title: "t", Content: "\xc3"}, []string{"content"}, "", nil},
		{"tags normalized", Draft{Title: "t", Tags: []string{" Work ", "WORK", "Straße", "STRASSE", "e\u0301", "é"}}, nil, "t", []string{"work", "strasse", "é"}},
		{"tag empty", Draft{Title: "t", Tags: []string{"ok", " "}}, []string{"tags[1]"}, "", nil},
		{"tag too long", Draft{Title: "t", Tags: []string{strings.Repeat("x", MaxTagChars+1)}}, []string{"tags[0]"}, "", nil},
		{"tag at limit", Draft{Title: "t", Tags: []string{strings.Repeat("ü", MaxTagChars)}}, nil, "t", []string{strings.Repeat("ü", MaxTagChars)}},
		{"too many tags", Draft{Title: "t", Tags: make([]string, MaxTags+1)}, []string{"tags"}, "", nil},
		{"every field", Draft{Title: "", Content: "\x00", Tags: []string{""}}, []string{"title", "content", "tags[0]"}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.d.Normalize()
			if fields := fieldsOf(err); !slices.Equal(fields, c.wantFields) {
				t.Fatalf("error fields = %v (%v), want %v", fields, err, c.wantFields)
			}
			if err != nil {
				return
			}
			if got.Title != c.wantTitle || !slices.Equal(got.Tags, c.wantTags) || got.Content != c.d.Content {
				t.Errorf("normalized = %+v, want title %q tags %q", got, c.wantTitle, c.wantTags)
			}
		})
	}
}

func TestPatchApply(t *testing.T) {
	cur := Note{Title: "t", Content: "c", Tags: []string{"a"}}
	d, err := Patch{Content: new("new")}.Apply(cur)
	if err != nil || d.Title != "t" || d.Content != "new" || !slices.Equal(d.Tags, []string{"a"}) {
		t.Errorf("content patch = %+v, %v", d, err)
	}
	var none []string
	d, err = Patch{Tags: &none}.Apply(cur)
	if err != nil || d.Tags == nil || len(d.Tags) != 0 {
		t.Errorf("tags null patch = %+v, %v; want empty tags", d, err)
	}
	if _, err := (Patch{Title: new(" ")}).Apply(cur); !slices.Equal(fieldsOf(err), []string{"title"}) {
		t.Errorf("blank title patch: %v", err)
	}
}

func TestListQueryValidate(t *testing.T) {
	q, err := ListQuery{Tags: []string{"A", "a"}}.Validate()
	if err != nil || q.Sort != SortCreatedAsc || !slices.Equal(q.Tags, []string{"a"}) {
		t.Errorf("validate = %+v, %v", q, err)
	}
	_, err = ListQuery{Sort: "id", Search: strings.Repeat("x", MaxQueryChars+1), Tags: []string{""}}.Validate()
	if got := fieldsOf(err); !slices.Equal(got, []string{"tag[0]", "q", "sort"}) {
		t.Errorf("fields = %v", got)
	}
}

func TestCondition(t *testing.T) {
	if !(Condition{}).Matches(3) || !(Condition{Present: true, Any: true}).Matches(3) {
		t.Error("absent or * condition must match")
	}
	if (Condition{Present: true, Versions: []int64{1, 2}}).Matches(3) || !(Condition{Present: true, Versions: []int64{1, 3}}).Matches(3) {
		t.Error("version list mismatch")
	}
	if got := (Condition{Present: true}).expected(); got == nil || len(got) != 0 {
		t.Errorf("present condition without versions expects %v, want an empty non-nil list", got)
	}
}

func TestIDs(t *testing.T) {
	var ids []string
	for range 1000 {
		id, err := NewID()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidID(id) {
			t.Fatalf("NewID() = %q is not valid", id)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Error("ids created in sequence do not sort in creation order")
	}
	for _, bad := range []string{"", "note_", "note_01ARZ3NDEKTSV4RRFFQ69G5FA", "note_01ARZ3NDEKTSV4RRFFQ69G5FAVX", "note_81ARZ3NDEKTSV4RRFFQ69G5FAV",
		"note_01ARZ3NDEKTSV4RRFFQ69G5FAU", "note_01arz3ndektsv4rrffq69g5fav", "nota_01ARZ3NDEKTSV4RRFFQ69G5FAV", "../../etc/passwd"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestFingerprintIgnoresFormatting(t *testing.T) {
	a, _ := Draft{Title: " x ", Content: "c", Tags: []string{"A"}}.Normalize()
	b, _ := Draft{Title: "x", Content: "c", Tags: []string{"a"}}.Normalize()
	c, _ := Draft{Title: "x", Content: "c "}.Normalize()
	if fingerprint("create", a) != fingerprint("create", b) || fingerprint("create", a) == fingerprint("create", c) {
		t.Error("fingerprint must follow the normalized request")
	}
	// Field boundaries are part of the hash.
	d, _ := Draft{Title: "ab", Content: "c"}.Normalize()
	e, _ := Draft{Title: "a", Content: "bc"}.Normalize()
	if fingerprint("create", d) == fingerprint("create", e) {
		t.Error("fingerprint must not be ambiguous across fields")
	}
}

func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewID(); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzNormalizeTag checks the ASCII fast path against the full Unicode
// normalization: trimmed, NFC, case-folded, NFC again.
func FuzzNormalizeTag(f *testing.F) {
	for _, seed := range []string{"Work", " WORK ", "q3 Review", "Éclair", "straße", "K", "\u212a", "a\tb", ""} {
		f.Add(seed)
	}
	fold := cases.Fold()
	f.Fuzz(func(t *testing.T, tag string) {
		want := norm.NFC.String(fold.String(norm.NFC.String(strings.TrimSpace(tag))))
		if got := NormalizeTag(tag); got != want {
			t.Fatalf("NormalizeTag(%q) = %q, want %q", tag, got, want)
		}
	})
}
