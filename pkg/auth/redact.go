package auth

import (
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces every credential that Redact* helpers remove.
const Redacted = "REDACTED"

// credentialParams are query parameters that carry keys. access_key is
// marketstack's; the others are common enough that a caller may try them.
var credentialParams = map[string]bool{"access_key": true, "api_key": true, "apikey": true, "key": true, "token": true}

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

// needsRewrite reports whether RedactQuery changes rawQuery: a credential
// or extra parameter is named, or separators (';', empty pairs) are
// normalised away.
func needsRewrite(rawQuery string, extra []string) bool {
	if strings.Contains(rawQuery, ";") || strings.Contains(rawQuery, "&&") {
		return true
	}
	for rest := rawQuery; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		name, _, _ := strings.Cut(part, "=")
		if isRedactedName(name, extra) {
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
		i := strings.IndexAny(rest, "&;")
		part := rest
		if i < 0 {
			rest = ""
		} else {
			part, rest = rest[:i], rest[i+1:]
		}
		if part == "" {
			continue
		}
		if !first {
			dst = append(dst, '&')
		}
		first = false
		name, _, hasValue := strings.Cut(part, "=")
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
	decoded := name
	if strings.ContainsAny(name, "%+") {
		if d, err := url.QueryUnescape(name); err == nil {
			decoded = d
		}
	}
	decoded = strings.TrimSpace(decoded)
	var buf [16]byte
	if lower, ok := asciiLower(buf[:0], decoded); ok {
		// ASCII lower-casing keeps each letter in its case-folding class,
		// so EqualFold against the original is EqualFold against lower.
		if credentialParams[string(lower)] {
			return true
		}
		return slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, decoded) })
	}
	lower := strings.ToLower(decoded)
	return credentialParams[lower] || slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, lower) })
}

// asciiLower appends s lower-cased to dst when s is ASCII and fits dst's
// capacity; ok is false otherwise (the caller then takes the general path).
func asciiLower(dst []byte, s string) ([]byte, bool) {
	if len(s) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
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
	path := u.EscapedPath()
	if u.RawQuery == "" {
		return path
	}
	// One buffer and one string for the whole line's path.
	var buf [256]byte
	b := append(buf[:0], path...)
	b = append(b, '?')
	if needsRewrite(u.RawQuery, extra) {
		b = appendRedactedQuery(b, u.RawQuery, extra)
	} else {
		b = append(b, u.RawQuery...)
	}
	return string(b)
}
