package httpapi

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// noteJSON is the API's note as a struct: encoded by encoding/json, it is
// the reference appendNoteJSON must match byte for byte.
type noteJSON struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
}

func render(n notes.Note) noteJSON {
	tags := n.Tags
	if tags == nil {
		tags = []string{}
	}
	return noteJSON{ID: n.ID, Title: n.Title, Content: n.Content, Tags: tags,
		CreatedAt: n.CreatedAt.UTC().Format(timeFormat), UpdatedAt: n.UpdatedAt.UTC().Format(timeFormat)}
}

// etag is the strong entity tag of a note version.

// encodedByReflection is what appendNoteJSON must match byte for byte.
func encodedByReflection(t testing.TB, n notes.Note) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(render(n)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sampleNote(content string) notes.Note {
	at := time.Date(2026, 11, 21, 6, 7, 8, 123456789, time.FixedZone("x", 3600))
	return notes.Note{ID: "note_01HK153XMVF2KABTBF7F9AESBQ", AccountID: "acct_1", Title: "Q3 review <draft> & notes",
		Content: content, Tags: []string{"research", "q3 \"deep\""}, CreatedAt: at, UpdatedAt: at.Add(time.Hour), Version: 3}
}

func TestAppendNoteJSONMatchesEncodingJSON(t *testing.T) {
	for _, content := range []string{
		"", "plain text", "quote \" backslash \\ slash /", "<script>&amp;</script>",
		"ctl \x00\x01\x07\b\f\n\r\t\x1f\x7f", "é 中文 🎉 مرحبا", "line\u2028sep\u2029para",
		"bad \xff\xfe utf-8 \xe2\x82", "\xed\xa0\x80 surrogate", "end\\",
	} {
		n := sampleNote(content)
		got := appendNoteJSON(nil, n)
		if want := encodedByReflection(t, n); !bytes.Equal(got, want) {
			t.Errorf("content %q:\n got %s\nwant %s", content, got, want)
		}
	}
	n := sampleNote("x")
	n.Tags = []string{}
	if got, want := appendNoteJSON(nil, n), encodedByReflection(t, n); !bytes.Equal(got, want) {
		t.Errorf("no tags:\n got %s\nwant %s", got, want)
	}
}

// FuzzNoteJSON checks the hand-written encoder against encoding/json on
// any text, valid UTF-8 or not.
func FuzzNoteJSON(f *testing.F) {
	for _, seed := range []string{"", "a\"b\\c", "\x00\u2028\xff", "🎉<>&"} {
		f.Add(seed, seed)
	}
	f.Fuzz(func(t *testing.T, title, content string) {
		n := sampleNote(content)
		n.Title = title
		n.Tags = []string{title, content}
		if got, want := appendNoteJSON(nil, n), encodedByReflection(t, n); !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
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
	b.Run("appendNoteJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = appendNoteJSON(make([]byte, 0, noteJSONSize(n)), n)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = encodedByReflection(b, n)
		}
	})
}
