package auth

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
)

// similarSpellings are names a client may send a key under that are not
// access_key byte for byte: the service's parser does not read the key
// from them (the request gets a 401 for a missing key), but the value is
// still a key and must not reach the log.
var similarSpellings = []string{
	"access_key%00", "%00access_key", "access_key%00%00", "acc%00ess_key", "ACCESS_KEY", "Access_Key",
	"access%5Fkey", "access%5fkey", "access+key", "access%20key", "access_key%20", "access_key+", "+access_key",
	"access_key%09", "access-key", "access.key", "accesskey", "access__key", "access_key%E2%80%8B",
	"x_access_key", "access_key2", "api_key", "apikey", "API%5FKEY", "key", "KEY%00", "\u212aey", "token", "TOKEN%0A",
	"auth_token", "access_token", "secret", "client_secret", "password", "access%255Fkey",
}

// TestSimilarNamesRedacted: a key sent under any near spelling of a
// credential name, alone, repeated, after a ';' or with a bad escape
// beside it, is absent from the redacted query.
func TestSimilarNamesRedacted(t *testing.T) {
	const secret = "tdm_0123456789abcdefghijklmnopqrstuvwxyzABCDEF"
	for _, name := range similarSpellings {
		for _, raw := range []string{
			name + "=" + secret,
			"symbols=AAPL&" + name + "=" + secret,
			"symbols=AAPL;" + name + "=" + secret,
			name + "=" + secret + "&" + name + "=" + secret,
			name + "=" + url.QueryEscape(secret) + "&x=%zz",
		} {
			if out := RedactQuery(raw); strings.Contains(out, secret[4:20]) {
				t.Errorf("RedactQuery(%q) = %q: the key is logged", raw, out)
			}
		}
	}
	// A key hidden in the name itself (an escaped '=') goes too.
	if out := RedactQuery("access_key%3D" + secret); strings.Contains(out, secret[4:20]) {
		t.Errorf("a key inside the name is logged: %q", out)
	}
	// Other parameters are left alone.
	if out := RedactQuery("symbols=AAPL&date_from=2024-01-01&limit=5&sort=ASC&q=x"); out != "symbols=AAPL&date_from=2024-01-01&limit=5&sort=ASC&q=x" {
		t.Errorf("plain query rewritten: %q", out)
	}
}

// foldedReference is a parameter name as the redactor compares it, the
// slow way: unescaped when it can be, then its letters and digits alone,
// lower-cased.
func foldedReference(name string) string {
	if d, err := url.QueryUnescape(name); err == nil {
		name = d
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == 'ſ':
			return 's'
		case r == 'ı':
			return 'i'
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return unicode.ToLower(r)
		}
		return -1
	}, name)
}

// secretLike is the test's own reading of "a credential name or one near
// it": its folded form contains a credential word.
func secretLike(name string) bool {
	f := foldedReference(name)
	for _, w := range []string{"key", "token", "secret", "password", "passwd"} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

// FuzzRedactedQueryKeepsNoSecret: for any raw query, every value that
// url.ParseQuery (and so marketdata's parseQuery, held to it by its own
// fuzz target) or a lenient reader splitting on ';' too would read under a
// credential name or one near it, is absent from the redacted query; and
// the redacted query, read back, holds nothing but REDACTED under such
// names. A value is checked when its text occurs once in the query, so
// that the same text under another name is not mistaken for a leak.
func FuzzRedactedQueryKeepsNoSecret(f *testing.F) {
	for _, name := range similarSpellings {
		f.Add(name+"=tdm_s3cretvalue&symbols=A", "q")
	}
	for _, s := range []string{"a=1;access_key%00=zzsecret", "access_key%3Dzzsecret", "&&acc%00ess_key===v", "%zz&token=zz1&token=zz2"} {
		f.Add(s, "tag")
	}
	f.Fuzz(func(t *testing.T, raw, extra string) {
		out := RedactQuery(raw, extra)
		for _, pair := range strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' }) {
			name, value, hasValue := strings.Cut(pair, "=")
			if !hasValue || value == "" || !secretLike(name) {
				continue
			}
			if strings.Count(raw, value) == 1 && !strings.Contains(Redacted, value) && strings.Contains(out, value) {
				t.Fatalf("RedactQuery(%q) = %q keeps %q, read under %q", raw, out, value, name)
			}
		}
		back, _ := url.ParseQuery(out)
		for name, values := range back {
			for _, v := range values {
				if secretLike(url.QueryEscape(name)) && v != "" && v != Redacted {
					t.Fatalf("RedactQuery(%q) = %q: %q reads back as %q", raw, out, name, v)
				}
			}
		}
	})
}
