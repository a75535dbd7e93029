package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// noteJSON is a note as the API shows it: its fields by their API names,
// times in the spec's UTC second form. encoding/json writes it: a
// hand-written encoder measured no faster (BenchmarkEncodeNote, a note of
// 600 bytes: 1.6-2.4 µs against 1.9-2.4 µs, well under 1% of a request of
// notes_get).
type noteJSON struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
	Pinned    bool     `json:"pinned"`
	// TrashedAt is null unless the note is in the trash.
	TrashedAt *string `json:"trashed_at"`
}

// render is n as the API shows it.
func render(n notes.Note) noteJSON {
	tags := n.Tags
	if tags == nil {
		tags = []string{}
	}
	var trashed *string
	if n.TrashedAt != nil {
		t := n.TrashedAt.UTC().Format(timeFormat)
		trashed = &t
	}
	return noteJSON{ID: n.ID, Title: n.Title, Content: n.Content, Tags: tags,
		CreatedAt: n.CreatedAt.UTC().Format(timeFormat), UpdatedAt: n.UpdatedAt.UTC().Format(timeFormat), Pinned: n.Pinned,
		TrashedAt: trashed}
}

// NoteObject is n as the API shows it, for the event log's data.object
// (notesdb.Store.SetEventObject): events carry the note in the form every
// response has.
func NoteObject(n notes.Note) json.RawMessage {
	return bytes.TrimSuffix(newNoteEncoder().encode(n), []byte("\n"))
}

// noteEncoder writes notes as the API shows them, each followed by a
// newline, without HTML escaping, so text comes back as sent. One encoder
// serves a whole listing, and the note reads and writes take theirs from
// the Server's pool: a read made a buffer and an encoder of its own
// before, three of the 69 allocations of a notes_get request and 1.1 of
// its 6.7 KB.
type noteEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newNoteEncoder() *noteEncoder {
	e := &noteEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// encode returns n as the API shows it, in the encoder's buffer: valid
// until the next call.
func (e *noteEncoder) encode(n notes.Note) []byte {
	e.buf.Reset()
	_ = e.enc.Encode(render(n)) // strings and a slice of them always encode
	return e.buf.Bytes()
}

// maxPooledNote bounds the buffer an encoder keeps in the pool: a note
// of the largest content would otherwise hold 100 KiB per idle encoder.
const maxPooledNote = 16 << 10
