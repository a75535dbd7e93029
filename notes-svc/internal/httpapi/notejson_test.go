package httpapi

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

func sampleNote(content string) notes.Note {
	at := time.Date(2026, 11, 21, 6, 7, 8, 123456789, time.FixedZone("x", 3600))
	return notes.Note{ID: "note_01HK153XMVF2KABTBF7F9AESBQ", AccountID: "acct_1", Title: "Q3 review <draft> & notes",
		Content: content, Tags: []string{"research", "q3 \"deep\""}, CreatedAt: at, UpdatedAt: at.Add(time.Hour), Version: 3}
}

// TestNoteJSON: a note is shown with its API names, times in UTC seconds,
// no HTML escaping and tags never null; the account and version are not
// shown (the version is the ETag).
func TestNoteJSON(t *testing.T) {
	n := sampleNote("<b>&</b>")
	n.Tags = nil
	got := newNoteEncoder().encode(n)
	if !bytes.HasSuffix(got, []byte("}\n")) || !bytes.Contains(got, []byte(`"content":"<b>&</b>"`)) {
		t.Errorf("%s: want one line, text unescaped", got)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"id": n.ID, "title": n.Title, "tags": []any{},
		"created_at": "2026-11-21T05:07:08Z", "updated_at": "2026-11-21T06:07:08Z"} {
		if !reflect.DeepEqual(m[k], want) {
			t.Errorf("%s = %#v, want %#v", k, m[k], want)
		}
	}
	for _, k := range []string{"account_id", "AccountID", "version", "Version"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s shown: %s", k, got)
		}
	}
}

// benchBody is a create request of about 600 bytes with three tags to
// normalize.
func benchBody(b *testing.B) []byte {
	body, err := os.ReadFile("testdata/create-600.json")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecodeCreateBody(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := decodeDraft(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Normalize(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeNote(b *testing.B) {
	d, err := decodeDraft(benchBody(b))
	if err != nil {
		b.Fatal(err)
	}
	n := sampleNote(d.Content)
	n.Title, n.Tags = d.Title, d.Tags
	e := newNoteEncoder()
	b.ReportAllocs()
	for b.Loop() {
		_ = e.encode(n)
	}
}
