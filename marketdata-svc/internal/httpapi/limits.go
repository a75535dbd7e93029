package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// rateLimit checks and counts the request against its key's limits and
// reports them in headers on every answer, written by pkg/keyrate as
// notes-svc writes them: RateLimit and RateLimit-Policy with the
// "second" and "month" policies, X-RateLimit-Limit/-Remaining/-Reset of
// the per-second limit, and Retry-After on a refusal.
func (s *Server) rateLimit(c *gin.Context) {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	d := s.o.Limiter.Allow(c.Request.Context(), p)
	st := keyrate.State{Rate: d.Rate, Remaining: d.Remaining, ResetAfter: d.ResetAfter, Refused: d.Err != nil, RetryAfter: d.RetryAfter}
	// A request refused by the rate limit never reached the usage counter,
	// so the month's state is unknown then and left out.
	if d.Quota > 0 && d.Err != ratelimit.ErrRateLimited {
		st.Quota, st.Used, st.QuotaResetAfter, st.QuotaWindow = d.Quota, d.Used, d.QuotaResetAfter, d.QuotaWindow
	}
	s.limitHeaders.Write(c.Writer.Header(), st)
	if d.Err != nil {
		s.writeError(c, d.Err)
		return
	}
	c.Next()
}
