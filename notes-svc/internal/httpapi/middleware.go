package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// deprecatedSince is when the unversioned alias was deprecated, as an RFC
// 9745 Deprecation value (2025-01-01T00:00:00Z).
const deprecatedSince = "@1735689600"

// deprecatedAlias marks responses of the unversioned paths as deprecated
// and points at their /v1 successor.
func (s *Server) deprecatedAlias() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Deprecation", deprecatedSince)
		c.Writer.Header().Add("Link", "</v1"+c.Request.URL.EscapedPath()+`>; rel="successor-version"`)
		c.Next()
	}
}

// rateLimit admits the request under its key's rate, and reports the
// limit on every answer with the headers marketdata-svc sends
// (pkg/keyrate): RateLimit, RateLimit-Policy, X-RateLimit-Limit/
// -Remaining/-Reset, and Retry-After on a 429. The count is this
// instance's: replicas do not share it.
func (s *Server) rateLimit(c *gin.Context) {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	r := s.limiter.Allow(p.KeyID)
	s.limitHeaders.Write(c.Writer.Header(), keyrate.State{Rate: s.limiter.Rate(), Remaining: r.Remaining, ResetAfter: r.ResetAfter,
		Refused: !r.Allowed, RetryAfter: r.RetryAfter})
	if !r.Allowed {
		s.fail(c, errRateLimited)
		return
	}
	c.Next()
}

// requireScope refuses keys without scope.
func (s *Server) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, ok := auth.PrincipalFrom(c.Request.Context())
		if !ok || !p.HasScope(scope) {
			s.fail(c, &scopeError{scope: scope})
			return
		}
		c.Next()
	}
}
