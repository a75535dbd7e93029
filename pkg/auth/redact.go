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
	if rawQuery == "" {
		return ""
	}
	parts := strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' })
	changed := false
	for i, part := range parts {
		name, _, hasValue := strings.Cut(part, "=")
		decoded, err := url.QueryUnescape(name)
		if err != nil {
			decoded = name
		}
		if lower := strings.ToLower(strings.TrimSpace(decoded)); credentialParams[lower] || slices.ContainsFunc(extra, func(e string) bool { return strings.EqualFold(e, lower) }) {
			if hasValue {
				parts[i] = name + "=" + Redacted
			}
			changed = true
		}
	}
	if !changed && !strings.Contains(rawQuery, ";") && !strings.Contains(rawQuery, "&&") {
		return rawQuery
	}
	return strings.Join(parts, "&")
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
	return path + "?" + RedactQuery(u.RawQuery, extra...)
}
