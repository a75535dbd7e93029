package auth

import (
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces every credential that Redact* helpers remove.
const Redacted = "REDACTED"

// isCredentialParam reports whether lower, a lower-case parameter name,
// carries keys. access_key is marketstack's; the others are common enough
// that a caller may try them.
func isCredentialParam(lower string) bool {
	switch lower {
	case "access_key", "api_key", "apikey", "key", "token":
		return true
	}
	return false
}

// RedactQuery returns rawQuery with the values of credential parameters,
// and of the extra parameters named (say, ones that quote private content),
// replaced. It works on the raw text, so a malformed query that
// url.ParseQuery would reject is still redacted, and names are matched
// after unescaping (access%5Fkey is access_key).
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
// credential and extra parameters replaced.
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
		if hasValue && isRedactedName(name, extra) {
			dst = append(dst, name...)
			dst = append(dst, '=')
			dst = append(dst, Redacted...)
			continue
		}
		dst = append(dst, part...)
	}
	return dst
}

// isRedactedName reports whether the raw (still escaped) parameter name is
// a credential parameter or one of extra: unescaped when it is a valid
// escape, trimmed and compared without regard to case.
func isRedactedName(name string, extra []string) bool {
	// The common name, short ASCII with nothing to unescape or trim, is
	// lower-cased in one pass on the stack.
	var buf [16]byte
	if lower, ok := plainLower(buf[:0], name); ok {
		// ASCII lower-casing keeps each letter in its case-folding class,
		// so EqualFold against the name is EqualFold against lower.
		return isCredentialParam(string(lower)) || slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, name) })
	}
	decoded := name
	if hasEscapes(name) {
		if d, err := url.QueryUnescape(name); err == nil {
			decoded = d
		}
	}
	lower := strings.ToLower(strings.TrimSpace(decoded))
	return isCredentialParam(lower) || slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, lower) })
}

// plainLower appends name lower-cased to dst when name needs no
// unescaping or trimming (printable ASCII other than '%', '+' and space)
// and fits dst's capacity; ok is false otherwise, and the caller takes the
// general path.
func plainLower(dst []byte, name string) ([]byte, bool) {
	if len(name) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || c == '%' || c == '+' {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
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
