// Package ratelimit enforces each API key's request rate (GCRA) and monthly
// usage quota, in Redis when the service has one and in process otherwise.
//
// The rate limit allows RatePerSecond requests per second with a burst of
// the same size (one second's worth), so a client that paces itself never
// sees a 429 and one that bursts gets at most a second's worth at once.
// The monthly usage counter counts each request the rate limit admits,
// once, in the calendar month (UTC) it arrives; a request refused by either
// limit is not counted.
package ratelimit

import (
	"errors"
	"time"
)

// Refusals. The HTTP layer maps them to 429 rate_limit_reached and
// usage_limit_reached.
var (
	ErrRateLimited  = errors.New("rate limit reached")
	ErrUsageLimited = errors.New("monthly usage limit reached")
)

// Decision is the outcome of one request against a key's limits, with what
// the RateLimit and X-RateLimit-* headers report.
type Decision struct {
	// Err is nil when the request may proceed, else ErrRateLimited or
	// ErrUsageLimited.
	Err error
	// Rate is the key's requests per second; 0 when it has no rate limit.
	Rate int
	// Remaining requests that could be made at once right now.
	Remaining int
	// ResetAfter is when the rate limiter returns to a full burst.
	ResetAfter time.Duration
	// RetryAfter is when a refused request may be retried.
	RetryAfter time.Duration
	// Quota is the key's monthly quota; 0 when it has none.
	Quota int64
	// Used is how many requests the month has counted, this one included.
	Used int64
	// QuotaResetAfter is the time to the start of the next month (UTC).
	QuotaResetAfter time.Duration
	// QuotaWindow is the length of the current month.
	QuotaWindow time.Duration
	// Degraded reports that the limits could not be checked (Redis down)
	// and the request was let through: the service fails open.
	Degraded bool
}

// monthWindow returns the month key of now (UTC), the time to the next
// month and the month's length.
func monthWindow(now time.Time) (month string, resetAfter, window time.Duration) {
	now = now.UTC()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	next := start.AddDate(0, 1, 0)
	return start.Format("2006-01"), next.Sub(now), next.Sub(start)
}
