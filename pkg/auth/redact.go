package auth

import (
	"bytes"
	"net/url"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces every credential that Redact* helpers remove.
const Redacted = "REDACTED"

// A parameter is a credential when its folded name (see appendFold)
// contains one of these words: access_key, api_key, apikey, key and token,
// but also every spelling near them that no parser reads as the real name
// (access_key%00, ACCESS-KEY, x_access_key, auth_token), since the value
// sent under it is a key all the same and must not reach a log. Neither
// service has a parameter with such a word in its name that is not a
// credential.
func isCredentialFold(folded []byte) bool {
	return bytes.Contains(folded, []byte("key")) || bytes.Contains(folded, []byte("token")) ||
		bytes.Contains(folded, []byte("secret")) || bytes.Contains(folded, []byte("passw"))
}

// isCredentialWord reports whether folded is exactly a credential name, so
// that the raw name, whatever else it holds (escapes, separators, case),
// carries no letter or digit of a key and can be logged as it came. A
// credential name holding more (access_key%3D<key> is one name) is logged
// as Redacted.
func isCredentialWord(folded []byte) bool {
	switch string(folded) {
	case "accesskey", "apikey", "key", "token", "accesstoken", "authtoken", "secret", "clientsecret", "password", "passwd":
		return true
	}
	return false
}

// appendFold appends the letters and digits of name to dst, lower-cased
// (with the two letters that lower-casing leaves apart from their ASCII
// fold, ſ and ı, folded too); every other byte (NUL, space, '_', '-',
// '.', a zero-width character, invalid UTF-8) is dropped, so that names
// that differ by those alone compare equal.
func appendFold(dst []byte, name string) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				dst = append(dst, c)
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		i += n
		switch {
		case r == 'ſ':
			dst = append(dst, 's')
		case r == 'ı':
			dst = append(dst, 'i')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
	}
	return dst
}

// classify tells whether the pair named name (raw, still escaped) has its
// value redacted, and whether its name must be too. The name is unescaped
// when it is a valid escape, then folded.
func classify(name string, extra []string) (redact, hideName bool) {
	decoded := name
	if hasEscapes(name) {
		if d, err := url.QueryUnescape(name); err == nil {
			decoded = d
		}
	}
	var buf [32]byte
	folded := appendFold(buf[:0], decoded)
	if isCredentialFold(folded) {
		return true, !isCredentialWord(folded)
	}
	for _, e := range extra {
		var ebuf [32]byte
		if bytes.Equal(folded, appendFold(ebuf[:0], e)) && len(folded) > 0 {
			return true, false
		}
	}
	return false, false
}

// RedactQuery returns rawQuery with the values of credential parameters
// (isCredentialFold: access_key and every name near it), and of the extra
// parameters named (say, ones that quote private content), replaced. It
// works on the raw text, so a malformed query that url.ParseQuery would
// reject is still redacted, and names are matched after unescaping and
// folding (access%5Fkey, ACCESS_KEY%00 and access-key are access_key; Q%00
// is q).
func RedactQuery(rawQuery string, extra ...string) string {
	if !needsRewrite(rawQuery, extra) {
		return rawQuery
	}
	return string(appendRedactedQuery(make([]byte, 0, len(rawQuery)+len(Redacted)), rawQuery, extra))
}

// Every access-log line redacts its URL, so the scans below are plain byte
// loops: strings.IndexAny and ContainsAny build a character set on every
// call, which made them most of the redaction's cost.

// nextPair splits the first pair off a raw query, at the first '&' or ';'.
func nextPair(q string) (pair, rest string) {
	for i := 0; i < len(q); i++ {
		if q[i] == '&' || q[i] == ';' {
			return q[:i], q[i+1:]
		}
	}
	return q, ""
}

// nameOf is the raw name of a pair, and whether the pair has a value.
func nameOf(pair string) (name string, hasValue bool) {
	for i := 0; i < len(pair); i++ {
		if pair[i] == '=' {
			return pair[:i], true
		}
	}
	return pair, false
}

// needsRewrite reports whether RedactQuery changes rawQuery: a credential
// or extra parameter is named, or separators (';', empty pairs) are
// normalised away.
func needsRewrite(rawQuery string, extra []string) bool {
	for i := 0; i < len(rawQuery); i++ {
		if c := rawQuery[i]; c == ';' || c == '&' && i+1 < len(rawQuery) && rawQuery[i+1] == '&' {
			return true
		}
	}
	// With no ';', pairs end at '&' alone.
	for rest := rawQuery; rest != ""; {
		var pair string
		pair, rest = nextPair(rest)
		if pair == "" {
			continue
		}
		if name, _ := nameOf(pair); isRedactedName(name, extra) {
			return true
		}
	}
	return false
}

// appendRedactedQuery appends RedactQuery's rewrite of rawQuery: the
// non-empty pairs between '&' and ';', joined by '&', with the values of
// credential and extra parameters replaced, and the name too when it holds
// more than a credential name.
func appendRedactedQuery(dst []byte, rawQuery string, extra []string) []byte {
	first := true
	for rest := rawQuery; rest != ""; {
		var part string
		part, rest = nextPair(rest)
		if part == "" {
			continue
		}
		if !first {
			dst = append(dst, '&')
		}
		first = false
		name, hasValue := nameOf(part)
		redact, hideName := false, false
		if isRedactedName(name, extra) {
			redact, hideName = classify(name, extra)
		}
		if !redact {
			dst = append(dst, part...)
			continue
		}
		if hideName {
			dst = append(dst, Redacted...)
		} else {
			dst = append(dst, name...)
		}
		if hasValue {
			dst = append(dst, '=')
			dst = append(dst, Redacted...)
		}
	}
	return dst
}

// isRedactedName reports whether the raw (still escaped) parameter name is
// a credential parameter, one near it, or one of extra (see classify).
func isRedactedName(name string, extra []string) bool {
	// The common name, short ASCII with nothing to unescape, is folded in
	// one pass on the stack.
	var buf [16]byte
	if folded, ok := plainFold(buf[:0], name); ok {
		if isCredentialFold(folded) {
			return true
		}
		for _, e := range extra {
			var ebuf [32]byte
			if len(folded) > 0 && bytes.Equal(folded, appendFold(ebuf[:0], e)) {
				return true
			}
		}
		return false
	}
	redact, _ := classify(name, extra)
	return redact
}

// plainFold appends name folded (appendFold) to dst when name needs no
// unescaping (ASCII other than '%' and '+') and fits dst's capacity; ok is
// false otherwise, and the caller takes the general path.
func plainFold(dst []byte, name string) ([]byte, bool) {
	if len(name) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || c == '%' || c == '+' {
			return nil, false
		}
	}
	return appendFold(dst, name), true
}

// RedactURL returns the path and redacted query of u, fit for a log line;
// extra names more parameters to mask, as RedactQuery does.
func RedactURL(u *url.URL, extra ...string) string {
	if u == nil {
		return ""
	}
	if u.RawQuery == "" {
		return u.EscapedPath()
	}
	var buf [256]byte
	return string(AppendRedactedURL(buf[:0], u, extra...))
}

// AppendRedactedURL appends RedactURL(u, extra...) to dst, for a caller
// that builds a line of its own and need not make the string.
func AppendRedactedURL(dst []byte, u *url.URL, extra ...string) []byte {
	if u == nil {
		return dst
	}
	dst = append(dst, u.EscapedPath()...)
	if u.RawQuery == "" {
		return dst
	}
	dst = append(dst, '?')
	if needsRewrite(u.RawQuery, extra) {
		return appendRedactedQuery(dst, u.RawQuery, extra)
	}
	return append(dst, u.RawQuery...)
}
