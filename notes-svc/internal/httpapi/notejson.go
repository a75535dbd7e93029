package httpapi

import (
	"unicode/utf8"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// appendNoteJSON appends the note as the API shows it, followed by a
// newline: byte for byte what json.Encoder with SetEscapeHTML(false) writes
// for render(n), without reflection and in one buffer.
func appendNoteJSON(b []byte, n notes.Note) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, n.ID)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, n.Title)
	b = append(b, `,"content":`...)
	b = appendJSONString(b, n.Content)
	b = append(b, `,"tags":[`...)
	for i, t := range n.Tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, t)
	}
	b = append(b, `],"created_at":"`...)
	b = n.CreatedAt.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","updated_at":"`...)
	b = n.UpdatedAt.UTC().AppendFormat(b, timeFormat)
	return append(b, "\"}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does
// without HTML escaping: control characters escaped, invalid UTF-8
// replaced by U+FFFD, and U+2028 and U+2029 escaped for JavaScript.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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
