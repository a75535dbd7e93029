package httpapi

import (
	"math"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// rateLimit checks and counts the request against its key's limits and
// reports them in headers on every answer: the IETF draft's RateLimit and
// RateLimit-Policy (structured fields, one item per policy: "second" and
// "month"), and the de-facto X-RateLimit-Limit/-Remaining/-Reset of the
// per-second limit (Reset in seconds from now). A refusal adds Retry-After.
func (s *Server) rateLimit(c *gin.Context) {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	d := s.limiter.Allow(c.Request.Context(), p)
	h := c.Writer.Header()
	var policy, state []byte
	if d.Rate > 0 {
		policy = append(policy, `"second";q=`...)
		policy = strconv.AppendInt(policy, int64(d.Rate), 10)
		policy = append(policy, ";w=1"...)
		state = append(state, `"second";r=`...)
		state = strconv.AppendInt(state, int64(max(d.Remaining, 0)), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, ceilSeconds(d.ResetAfter), 10)
		h.Set("X-RateLimit-Limit", strconv.Itoa(d.Rate))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilSeconds(d.ResetAfter), 10))
	}
	// A request refused by the rate limit never reached the usage counter,
	// so the month's state is unknown then and left out.
	if d.Quota > 0 && d.Err != ratelimit.ErrRateLimited {
		if len(policy) > 0 {
			policy = append(policy, ", "...)
			state = append(state, ", "...)
		}
		policy = append(policy, `"month";q=`...)
		policy = strconv.AppendInt(policy, d.Quota, 10)
		policy = append(policy, ";w="...)
		policy = strconv.AppendInt(policy, ceilSeconds(d.QuotaWindow), 10)
		state = append(state, `"month";r=`...)
		state = strconv.AppendInt(state, max(d.Quota-d.Used, 0), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, ceilSeconds(d.QuotaResetAfter), 10)
	}
	if len(policy) > 0 {
		h.Set("RateLimit-Policy", string(policy))
		h.Set("RateLimit", string(state))
	}
	if d.Err != nil {
		h.Set("Retry-After", strconv.FormatInt(max(ceilSeconds(d.RetryAfter), 1), 10))
		s.writeError(c, d.Err)
		return
	}
	c.Next()
}

// ceilSeconds rounds up, so a client waiting that long is never early.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
