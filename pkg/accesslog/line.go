package accesslog

import (
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/jsonstring"
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
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = jsonstring.AppendSlog(b, l.requestID)
	b = append(b, `,"method":`...)
	b = jsonstring.AppendSlog(b, l.method)
	b = append(b, `,"route":`...)
	b = jsonstring.AppendSlog(b, l.route)
	b = append(b, `,"path":"`...)
	// The redacted URL is built into the line rather than into a string
	// of its own; only one holding something to escape is copied out and
	// escaped.
	start := len(b)
	b = auth.AppendRedactedURL(b, l.url, l.private...)
	if plain(b[start:]) {
		b = append(b, '"')
	} else {
		b = jsonstring.AppendSlog(b[:start-1], string(b[start:]))
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	b = append(b, `,"duration_us":`...)
	b = strconv.AppendInt(b, l.durationUS, 10)
	b = append(b, `,"client_ip":`...)
	b = jsonstring.AppendSlog(b, l.clientIP)
	if l.authenticated {
		b = append(b, `,"account_id":`...)
		b = jsonstring.AppendSlog(b, l.accountID)
		b = append(b, `,"key_id":`...)
		b = jsonstring.AppendSlog(b, l.keyID)
	}
	return append(b, "}\n"...)
}

// plain reports whether p stands for itself inside a JSON string:
// printable ASCII other than the quote and the backslash.
func plain(p []byte) bool {
	for _, c := range p {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
