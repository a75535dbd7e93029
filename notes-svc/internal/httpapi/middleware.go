package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
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
