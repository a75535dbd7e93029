package httpapi

import (
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/jsonstring"
)

// appendNoteJSON appends the note as the API shows it, followed by a
// newline: byte for byte what json.Encoder with SetEscapeHTML(false) writes
// for the test file's render(n), without reflection and in one buffer.
func appendNoteJSON(b []byte, n notes.Note) []byte {
	b = append(b, `{"id":`...)
	b = jsonstring.AppendNoHTMLEscape(b, n.ID)
	b = append(b, `,"title":`...)
	b = jsonstring.AppendNoHTMLEscape(b, n.Title)
	b = append(b, `,"content":`...)
	b = jsonstring.AppendNoHTMLEscape(b, n.Content)
	b = append(b, `,"tags":[`...)
	for i, t := range n.Tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstring.AppendNoHTMLEscape(b, t)
	}
	b = append(b, `],"created_at":"`...)
	b = n.CreatedAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","updated_at":"`...)
	b = n.UpdatedAt.UTC().AppendFormat(b, timeFormat)
	return append(b, "\"}\n"...)
}

// noteJSONSize estimates the encoded size of n, so that encoding it
// allocates once.
func noteJSONSize(n notes.Note) int {
	size := 128 + len(n.ID) + len(n.Title) + len(n.Content)
	for _, t := range n.Tags {
		size += len(t) + 3
	}
	return size + size/16
}
