package accesslog

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// viaSlog is the line slog's JSON handler writes for l: the record the
// middleware wrote before it encoded lines itself, and the reference
// appendLine is held to byte for byte.
func viaSlog(t testing.TB, l *line) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), slogRecord(l)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// slogRecord is l as the slog record the middleware wrote before it
// encoded lines itself.
func slogRecord(l *line) slog.Record {
	r := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("request_id", l.requestID),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.String("path", auth.RedactURL(l.url, l.private...)),
		slog.Int("status", l.status),
		slog.Int("bytes", l.bytes),
		slog.Int64("duration_us", l.durationUS),
		slog.String("client_ip", l.clientIP),
	)
	if l.authenticated {
		r.AddAttrs(slog.String("account_id", l.accountID), slog.String("key_id", l.keyID))
	}
	return r
}

func TestLineIsSlogsLine(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	base := line{
		time:      time.Date(2026, 11, 26, 1, 35, 41, 971341301, time.UTC),
		requestID: "aac9169147b65d62075b30693091b381", method: "GET", route: "/v1/eod",
		url:    &url.URL{Path: "/v1/eod", RawQuery: "access_key=tdm_secret&symbols=AAPL,MSFT&limit=100"},
		status: 200, bytes: 37051, durationUS: 1287, clientIP: "127.0.0.1",
		accountID: "3ce64f8a-00f6-4471-9a19-733d503e8b2a", keyID: "6647204d-a060-4323-bf1c-c1b20e0e595c", authenticated: true,
	}
	cases := map[string]func(l *line){
		"cache hit":           func(*line) {},
		"anonymous":           func(l *line) { l.authenticated = false },
		"whole second":        func(l *line) { l.time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		"trailing zeros":      func(l *line) { l.time = time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC) },
		"local zone":          func(l *line) { l.time = l.time.In(berlin) },
		"monotonic reading":   func(l *line) { l.time = time.Now() },
		"private parameter":   func(l *line) { l.url.RawQuery = "q=my+diary&tag=x"; l.private = []string{"q"} },
		"no query":            func(l *line) { l.url = &url.URL{Path: "/healthz"} },
		"nil url":             func(l *line) { l.url = nil },
		"escaped path":        func(l *line) { l.url = &url.URL{Path: "/v1/tickers/BRK/A", RawPath: "/v1/tickers/BRK%2FA"} },
		"path needing escape": func(l *line) { l.url = &url.URL{Path: "/v1/tickers/é \"x\""} },
		"quotes in query":     func(l *line) { l.url.RawQuery = `symbols="AAPL"\&limit=1` },
		"control characters":  func(l *line) { l.url.RawQuery = "a=\x00\x01\x1f\n\r\t\x7f"; l.requestID = "\b\f" },
		"html characters":     func(l *line) { l.url.RawQuery = "a=<b>&c=&amp;" },
		"invalid utf-8":       func(l *line) { l.url.RawQuery = "a=\xff\xfe&b=\xc3"; l.keyID = "\xed\xa0\x80" },
		"line separators":     func(l *line) { l.url.RawQuery = "a=\u2028\u2029"; l.accountID = "x\u2028y" },
		"non-ascii":           func(l *line) { l.url.RawQuery = "name=Müller&sym=日本"; l.clientIP = "::1" },
		"empty fields":        func(l *line) { *l = line{time: l.time} },
		"negative numbers":    func(l *line) { l.status, l.bytes, l.durationUS = -1, -1, -1 },
		"huge numbers":        func(l *line) { l.status, l.bytes, l.durationUS = 1<<62, 1<<62, 1<<62 },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			l := base
			u := *base.url
			l.url = &u
			change(&l)
			want := viaSlog(t, &l)
			if got := appendLine(nil, &l); !bytes.Equal(got, want) {
				t.Errorf("line differs from slog's\n got %s\nwant %s", got, want)
			}
		})
	}
}

// FuzzLine holds appendLine to slog's JSON handler for any field values:
// strings with any bytes, any time, any numbers.
func FuzzLine(f *testing.F) {
	f.Add("req-1", "/v1/eod", "/v1/eod", "access_key=x&symbols=AAPL", "10.0.0.1", "acc", int64(1764120941), int64(971341301), 200, int64(5), true)
	f.Add("\x00\"\\", "\u2028", "/a b/\xff", "q=\xc3\x28&access%5Fkey=k;x=1", "", "\x7f<>&", int64(0), int64(0), -1, int64(-7), false)
	f.Fuzz(func(t *testing.T, requestID, route, path, query, clientIP, account string, sec, nsec int64, status int, duration int64, authenticated bool) {
		// slog reports, rather than writes, a year past 9999.
		tm := time.Unix(sec%253402300799, nsec)
		if tm.Year() < 0 || tm.Year() > 9999 {
			t.Skip()
		}
		l := line{time: tm.In(time.FixedZone("", int(nsec%50_000))), requestID: requestID, method: "GET", route: route,
			url: &url.URL{Path: path, RawPath: path, RawQuery: query}, private: []string{"q"},
			status: status, bytes: status * 3, durationUS: duration, clientIP: clientIP,
			accountID: account, keyID: requestID + account, authenticated: authenticated}
		if got, want := appendLine(nil, &l), viaSlog(t, &l); !bytes.Equal(got, want) {
			t.Errorf("line differs from slog's\n got %q\nwant %q", got, want)
		}
	})
}

// BenchmarkLine is the encoding of one cache-hit line, by slog's JSON
// handler as the services did before and by appendLine, both into
// io.Discard-bound buffers.
func BenchmarkLine(b *testing.B) {
	l := line{time: time.Now(), requestID: "aac9169147b65d62075b30693091b381", method: "GET", route: "/v1/eod",
		url:    &url.URL{Path: "/v1/eod", RawQuery: "access_key=tdm_ooMbWScOZQrIw196a18hO5lsCREBay17fuwFCXh9dKd1Gzukq&symbols=SYN000001,SYN000002&limit=100"},
		status: 200, bytes: 37051, durationUS: 1287, clientIP: "127.0.0.1",
		accountID: "3ce64f8a-00f6-4471-9a19-733d503e8b2a", keyID: "6647204d-a060-4323-bf1c-c1b20e0e595c", authenticated: true}
	b.Run("slog", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			r := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
			r.AddAttrs(slog.String("request_id", l.requestID), slog.String("method", l.method), slog.String("route", l.route),
				slog.String("path", auth.RedactURL(l.url)), slog.Int("status", l.status), slog.Int("bytes", l.bytes),
				slog.Int64("duration_us", l.durationUS), slog.String("client_ip", l.clientIP),
				slog.String("account_id", l.accountID), slog.String("key_id", l.keyID))
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("own", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf = appendLine(buf[:0], &l)
			_, _ = io.Discard.Write(buf)
		}
	})
}
