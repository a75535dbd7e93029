package notes

import (
	"errors"
	"testing"
	"time"
)

func TestCursorsRoundTrip(t *testing.T) {
	c := NoteCursor{CreatedAt: time.Date(2026, 11, 21, 5, 27, 25, 123456000, time.UTC), ID: "note_01M7Y95PNDE62AFVSM1KHX6F9E"}
	got, err := DecodeNoteCursor(c.Encode())
	if err != nil || got != c {
		t.Fatalf("note cursor %+v decodes to %+v, %v", c, got, err)
	}
	seq, err := DecodeEventCursor(EncodeEventCursor(42))
	if err != nil || seq != 42 {
		t.Fatalf("event cursor 42 decodes to %d, %v", seq, err)
	}
	for _, bad := range []string{"", "!!", "AAAA", EncodeEventCursor(7) + "A", "AAAAAAAAAAB4LW5vdGU"} {
		if _, err := DecodeNoteCursor(bad); err == nil {
			t.Errorf("note cursor %q decoded", bad)
		}
	}
	for _, bad := range []string{"", "!!", "AAAA", c.Encode(), "gAAAAAAAAAA"} {
		if _, err := DecodeEventCursor(bad); err == nil {
			t.Errorf("event cursor %q decoded", bad)
		}
	}
}

func TestCursorAndRelevanceRules(t *testing.T) {
	c := &NoteCursor{ID: "note_01M7Y95PNDE62AFVSM1KHX6F9E"}
	cases := []struct {
		q     ListQuery
		param string // "" when valid
	}{
		{ListQuery{After: c}, ""},
		{ListQuery{After: c, Sort: SortCreatedDesc}, ""},
		{ListQuery{StartingAfter: "x", Sort: SortCreatedAsc}, ""},
		{ListQuery{After: c, Sort: SortUpdatedDesc}, "starting_after"},
		{ListQuery{After: c, Sort: "created_at,title"}, "starting_after"},
		{ListQuery{After: c, Sort: SortRelevance, Search: "x"}, "starting_after"},
		{ListQuery{After: c, Offset: 3}, "starting_after"},
		{ListQuery{Sort: SortRelevance}, "sort"},
		{ListQuery{Sort: SortRelevance, Search: "x"}, ""},
	}
	for _, tc := range cases {
		_, err := tc.q.Validate()
		var perr *ParamError
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("%+v: %v", tc.q, err)
		case tc.param != "" && (!errors.As(err, &perr) || perr.Field.Name != tc.param):
			t.Errorf("%+v: %v, want a refusal of %s", tc.q, err, tc.param)
		}
	}
	if _, err := (ListQuery{Sort: "relevance,title", Search: "x"}).Validate(); err == nil {
		t.Error("relevance among other keys is accepted")
	}
}

func TestParseEventTypes(t *testing.T) {
	got, err := ParseEventTypes([]string{"note.created, note.deleted", "note.created"})
	if err != nil || len(got) != 2 || got[0] != EventNoteCreated || got[1] != EventNoteDeleted {
		t.Errorf("types = %v, %v", got, err)
	}
	if _, err := ParseEventTypes([]string{"note.created,"}); err == nil {
		t.Error("an empty type is accepted")
	}
}
