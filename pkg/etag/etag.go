// Package etag applies conditional-request headers the same way in both
// services (RFC 9110 section 13).
package etag

import "strings"

// NoneMatch reports whether the If-None-Match field values name tag, with
// the weak comparison RFC 9110 13.1.2 asks for: "*", or any listed tag equal
// to tag once a W/ prefix is ignored. values are all the field's lines
// (http.Header.Values), since a client or proxy may split the list over
// several; tag is a strong tag with its quotes.
func NoneMatch(values []string, tag string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "*" || strings.TrimPrefix(part, "W/") == tag {
				return true
			}
		}
	}
	return false
}
