// Package jsonstring appends Go strings as JSON strings, byte for byte as
// encoding/json writes them, for the hand-written encoders of the hot
// responses (a note, an EOD page) that must not pay for reflection yet must
// not differ by a byte from what a reflective encoder would send; and as
// log/slog's JSON handler writes them, for the access line
// (pkg/accesslog).
package jsonstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s as encoding/json's Marshal writes it: quotes,
// backslashes, \b \f \n \r \t by name, other control characters and <, >
// and & (so the output is safe inside HTML) as \u escapes, U+2028 and
// U+2029 escaped for JavaScript, and invalid UTF-8 as U+FFFD.
func Append(b []byte, s string) []byte { return appendString(b, s, true, true) }

// AppendNoHTMLEscape appends s as a json.Encoder with SetEscapeHTML(false)
// writes it: as Append, but <, > and & are left as they are.
func AppendNoHTMLEscape(b []byte, s string) []byte { return appendString(b, s, false, true) }

// AppendSlog appends s as log/slog's JSON handler writes a string value:
// as AppendNoHTMLEscape, but \b and \f as \u escapes, which slog's own
// escaper keeps.
func AppendSlog(b []byte, s string) []byte { return appendString(b, s, false, false) }

// appendString escapes s; escapeHTML escapes <, > and &, and nameBF
// writes \b and \f by name.
func appendString(b []byte, s string, escapeHTML, nameBF bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b', '\f':
				if !nameBF {
					b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				} else if c == '\b' {
					b = append(b, '\\', 'b')
				} else {
					b = append(b, '\\', 'f')
				}
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
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
