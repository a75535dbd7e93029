package accesslog

import (
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// The line is encoded here rather than by slog's JSON handler because it
// is written once per request: through slog it was a tenth of
// marketdata-svc's CPU on a cache hit, most of it spent on generic
// machinery (the Record and its attribute slice, the handler's state,
// per-attribute kind switches) that a fixed set of fields does not need.
// The bytes are slog's own: line_test.go holds every field, including
// strings that need escaping, byte for byte to slog.NewJSONHandler's output
// for the same record, so log pipelines cannot tell the two apart.

// line holds one request's fields, in the order they are written.
type line struct {
	time      time.Time
	requestID string
	method    string
	route     string
	// url and private make the "path" field: the URL's path and query,
	// with credentials and the private parameters redacted (pkg/auth).
	url        *url.URL
	private    []string
	status     int
	bytes      int
	durationUS int64
	clientIP   string
	accountID  string
	keyID      string
	// authenticated adds account_id and key_id, which are written only
	// for a request that got past authentication.
	authenticated bool
}

// appendLine appends l as slog's JSON handler writes a record at Info
// with message "request" and l's fields as attributes, newline included.
func appendLine(b []byte, l *line) []byte {
	b = append(b, `{"time":"`...)
	b = l.time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":"`...)
	b = appendEscaped(b, l.requestID)
	b = append(b, `","method":"`...)
	b = appendEscaped(b, l.method)
	b = append(b, `","route":"`...)
	b = appendEscaped(b, l.route)
	b = append(b, `","path":"`...)
	// The redacted URL is built into the line and escaped there, rather
	// than made a string of its own first.
	start := len(b)
	b = auth.AppendRedactedURL(b, l.url, l.private...)
	b = escapeTail(b, start)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	b = append(b, `,"duration_us":`...)
	b = strconv.AppendInt(b, l.durationUS, 10)
	b = append(b, `,"client_ip":"`...)
	b = appendEscaped(b, l.clientIP)
	if l.authenticated {
		b = append(b, `","account_id":"`...)
		b = appendEscaped(b, l.accountID)
		b = append(b, `","key_id":"`...)
		b = appendEscaped(b, l.keyID)
	}
	return append(b, "\"}\n"...)
}

// plain reports whether c stands for itself inside a JSON string as slog
// writes one: printable ASCII other than the quote and the backslash
// (slog, unlike encoding/json's default, leaves <, > and & alone).
func plain(c byte) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\'
}

// appendEscaped appends s with slog's JSON string escaping, without the
// quotes.
func appendEscaped(b []byte, s string) []byte {
	i := 0
	for i < len(s) && plain(s[i]) {
		i++
	}
	b = append(b, s[:i]...)
	if i == len(s) {
		return b
	}
	return appendEscapedSlow(b, s[i:])
}

// escapeTail escapes b[start:], which was appended unescaped, so that the
// common case, a tail with nothing to escape, costs one scan and no copy.
func escapeTail(b []byte, start int) []byte {
	i := start
	for i < len(b) && plain(b[i]) {
		i++
	}
	if i == len(b) {
		return b
	}
	return appendEscapedSlow(b[:i], string(b[i:]))
}

const hexDigits = "0123456789abcdef"

// appendEscapedSlow is appendEscaped for a string that holds something to
// escape: control characters as \n, \r, \t or \u00XX, the quote and the
// backslash with a backslash, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 (line separators to JavaScript) as \u2028 and \u2029.
func appendEscapedSlow(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
