// Package dsn masks the secrets of connection URLs (PostgreSQL, Redis)
// before a configuration is logged, the same way in both services.
package dsn

import "net/url"

// Masked stands in for a password. Letters only, so that it stays readable
// where the URL encoding would escape punctuation (* becomes %2A).
const Masked = "xxxxx"

// Mask returns raw with its password replaced, in the user information or
// in a password query parameter (libpq's form), fit for logs. A URL that
// does not parse is hidden whole, since its secret may sit anywhere.
func Mask(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable, hidden)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), Masked)
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", Masked)
		u.RawQuery = q.Encode()
	}
	return u.String()
}
