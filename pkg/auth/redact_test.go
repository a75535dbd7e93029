package auth

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestRedactQuery(t *testing.T) {
	cases := map[string]string{
		"":                              "",
		"symbols=AAPL":                  "symbols=AAPL",
		"access_key=s3cret&symbols=A":   "access_key=REDACTED&symbols=A",
		"symbols=A&ACCESS_KEY=s3cret":   "symbols=A&ACCESS_KEY=REDACTED",
		"access%5Fkey=s3cret":           "access%5Fkey=REDACTED",
		"access_key=a%zz&x=1":           "access_key=REDACTED&x=1",
		"x=1;access_key=s3cret":         "x=1&access_key=REDACTED",
		"api_key=s3cret&token=s3cret":   "api_key=REDACTED&token=REDACTED",
		"access_key=s3cret&access_key=": "access_key=REDACTED&access_key=REDACTED",
	}
	for in, want := range cases {
		if got := RedactQuery(in); got != want {
			t.Errorf("RedactQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactQueryExtraNames(t *testing.T) {
	got := RedactQuery("q=secret+plans&tag=hr&tag=x&limit=5&access_key=k", "q", "tag")
	if want := "q=REDACTED&tag=REDACTED&tag=REDACTED&limit=5&access_key=REDACTED"; got != want {
		t.Fatalf("RedactQuery = %q, want %q", got, want)
	}
	u, _ := url.Parse("/v1/notes?Q=secret")
	if got := RedactURL(u, "q"); got != "/v1/notes?Q=REDACTED" {
		t.Fatalf("RedactURL = %q", got)
	}
}

// TestLoggedRequestLineHasNoAccessKey logs a request the way the services'
// access logs do and checks the secret is absent from the output.
func TestLoggedRequestLineHasNoAccessKey(t *testing.T) {
	const secret = "tdm_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGxyz123"
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	for _, target := range []string{
		"/v1/eod?access_key=" + secret + "&symbols=AAPL",
		"/v1/eod?symbols=AAPL&access_key=" + url.QueryEscape(secret),
		"/v1/eod?access%5Fkey=" + secret,
	} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		log.Info("request", "method", req.Method, "url", RedactURL(req.URL))
	}
	if strings.Contains(buf.String(), secret) || strings.Contains(buf.String(), secret[4:20]) {
		t.Fatalf("log contains the key:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "access_key=REDACTED") {
		t.Fatalf("log lost the redacted parameter:\n%s", buf.String())
	}
}

func FuzzRedactQuery(f *testing.F) {
	for _, s := range []string{"access_key=abc", "a=1&access_key=abc;b=2", "access%5fkey=abc", "%zz=1&access_key=x", "&&access_key==="} {
		f.Add(s, "s3cretvalue")
	}
	f.Fuzz(func(t *testing.T, prefix, secret string) {
		if len(secret) < 6 || strings.ContainsAny(secret, "&;=%") {
			return
		}
		raw := prefix + "&access_key=" + secret
		if out := RedactQuery(raw); strings.Contains(out, "access_key="+secret) {
			t.Fatalf("RedactQuery(%q) = %q leaks the secret", raw, out)
		}
	})
}

// redactQueryReference is RedactQuery the slow way: split, unescape,
// fold, compare and join.
func redactQueryReference(rawQuery string, extra ...string) string {
	if rawQuery == "" {
		return ""
	}
	parts := strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' })
	changed := false
	for i, part := range parts {
		name, _, hasValue := strings.Cut(part, "=")
		folded := foldedReference(name)
		secret := secretLike(name)
		if !secret && (folded == "" || !slices.ContainsFunc(extra, func(e string) bool { return foldedReference(url.QueryEscape(e)) == folded })) {
			continue
		}
		changed = true
		if secret && !slices.Contains([]string{"accesskey", "apikey", "key", "token", "accesstoken", "authtoken", "secret", "clientsecret", "password", "passwd"}, folded) {
			name = Redacted
		}
		parts[i] = name
		if hasValue {
			parts[i] += "=" + Redacted
		}
	}
	if !changed && !strings.Contains(rawQuery, ";") && !strings.Contains(rawQuery, "&&") {
		return rawQuery
	}
	return strings.Join(parts, "&")
}

var redactCases = []string{
	"", "a=1", "&a=1", "a=1&", "&key", "key", "a=1&&b=2", "x=1;access_key=s", "access%5Fkey=s", "access%zz=1&token=t",
	"Access_Key=s", " access_key =s", "access+key=s", "%20key%20=s", "q=1&Q=2", "İd=1", "access_key=s&access_key",
	"ACCESS_KEY_TOO_LONG_FOR_THE_BUFFER=1", "\u212aey=s", "=x&=&&;", "q%=1&tag=x",
}

func TestRedactQueryMatchesReference(t *testing.T) {
	for _, extra := range [][]string{nil, {"q", "tag"}, {"id"}} {
		for _, raw := range redactCases {
			if got, want := RedactQuery(raw, extra...), redactQueryReference(raw, extra...); got != want {
				t.Errorf("RedactQuery(%q, %q) = %q, reference %q", raw, extra, got, want)
			}
			u := &url.URL{Path: "/v1/eod", RawQuery: raw}
			want := "/v1/eod"
			if raw != "" {
				want += "?" + redactQueryReference(raw, extra...)
			}
			if got := RedactURL(u, extra...); got != want {
				t.Errorf("RedactURL(%q, %q) = %q, want %q", raw, extra, got, want)
			}
		}
	}
}

func FuzzRedactQueryMatchesReference(f *testing.F) {
	for _, raw := range redactCases {
		f.Add(raw, "q")
	}
	f.Fuzz(func(t *testing.T, raw, extra string) {
		if got, want := RedactQuery(raw, extra), redactQueryReference(raw, extra); got != want {
			t.Fatalf("RedactQuery(%q, %q) = %q, reference %q", raw, extra, got, want)
		}
	})
}

func BenchmarkRedactURL(b *testing.B) {
	u, _ := url.Parse("/v1/eod?access_key=md_0123456789abcdef0123456789abcdef&symbols=GOOG,MSFT&limit=100")
	b.ReportAllocs()
	for b.Loop() {
		_ = RedactURL(u)
	}
}
