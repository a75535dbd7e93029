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
	// A request refused by the rate limit never reached the usage counter,
	// so the month's state is unknown then and left out.
	withMonth := d.Quota > 0 && d.Err != ratelimit.ErrRateLimited
	var stateBuf [96]byte
	state := stateBuf[:0]
	// The per-request values share one backing array: one allocation, not
	// one a header.
	var v *[3]string
	if d.Rate > 0 {
		reset := ceilSeconds(d.ResetAfter)
		state = append(state, `"second";r=`...)
		state = strconv.AppendInt(state, int64(max(d.Remaining, 0)), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, reset, 10)
		v = &[3]string{strconv.Itoa(max(d.Remaining, 0)), strconv.FormatInt(reset, 10)}
		h[hdrXRateLimitRemain] = v[0:1:1]
		h[hdrXRateLimitReset] = v[1:2:2]
	}
	if withMonth {
		if len(state) > 0 {
			state = append(state, ", "...)
		}
		state = append(state, `"month";r=`...)
		state = strconv.AppendInt(state, max(d.Quota-d.Used, 0), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, ceilSeconds(d.QuotaResetAfter), 10)
	}
	if d.Rate > 0 || withMonth {
		lh := s.limitHeadersOf(d, withMonth)
		if d.Rate > 0 {
			h[hdrXRateLimitLimit] = lh.limit
		}
		h[hdrRateLimitPolicy] = lh.policy
		if v == nil {
			v = new([3]string)
		}
		v[2] = string(state)
		h[hdrRateLimit] = v[2:3:3]
	}
	if d.Err != nil {
		h[hdrRetryAfter] = []string{strconv.FormatInt(max(ceilSeconds(d.RetryAfter), 1), 10)}
		s.writeError(c, d.Err)
		return
	}
	c.Next()
}

// limitHeaders are the header values that depend on a key's limits alone,
// not on its usage: RateLimit-Policy and X-RateLimit-Limit. They are built
// once per set of limits; the last set is kept, since most requests come
// under few plans, and a different set only costs building them again.
type limitHeaders struct {
	rate   int
	quota  int64 // 0 when the month is left out
	window int64 // the month's length in seconds, when it is in
	policy []string
	limit  []string
}

// limitHeadersOf returns the limit headers of d, with the month's policy
// when withMonth.
func (s *Server) limitHeadersOf(d ratelimit.Decision, withMonth bool) *limitHeaders {
	rate, quota, window := max(d.Rate, 0), int64(0), int64(0)
	if withMonth {
		quota, window = d.Quota, ceilSeconds(d.QuotaWindow)
	}
	if lh := s.limitHeaders.Load(); lh != nil && lh.rate == rate && lh.quota == quota && lh.window == window {
		return lh
	}
	lh := &limitHeaders{rate: rate, quota: quota, window: window}
	var policy []byte
	if rate > 0 {
		policy = append(policy, `"second";q=`...)
		policy = strconv.AppendInt(policy, int64(rate), 10)
		policy = append(policy, ";w=1"...)
		lh.limit = []string{strconv.Itoa(rate)}
	}
	if withMonth {
		if len(policy) > 0 {
			policy = append(policy, ", "...)
		}
		policy = append(policy, `"month";q=`...)
		policy = strconv.AppendInt(policy, quota, 10)
		policy = append(policy, ";w="...)
		policy = strconv.AppendInt(policy, window, 10)
	}
	lh.policy = []string{string(policy)}
	s.limitHeaders.Store(lh)
	return lh
}

// ceilSeconds rounds up, so a client waiting that long is never early.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
