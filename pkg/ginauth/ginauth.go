// Package ginauth is pkg/auth's gin middleware, kept apart so that auth
// itself depends on no web framework.
package ginauth

import (
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// ErrorWriter answers a failed authentication in the service's own error
// format. err is auth.ErrMissingKey, auth.ErrInvalidKey, an
// *auth.ThrottledError (429 with Retry-After) or a store error.
type ErrorWriter func(c *gin.Context, err error)

// Middleware authenticates every request with the key from src and stores
// the principal in the request context; failures are answered by writeErr.
// With a failure throttle, the client address is gin's ClientIP, so it is
// only as trustworthy as the engine's trusted-proxy setting.
func Middleware(a *auth.Authenticator, src auth.CredentialSource, writeErr ErrorWriter) gin.HandlerFunc {
	return func(c *gin.Context) {
		key, present := src(c.Request)
		p, err := a.Authenticate(c.Request.Context(), key, present, c.ClientIP)
		if err != nil {
			writeErr(c, err)
			c.Abort()
			return
		}
		c.Request = c.Request.WithContext(auth.WithPrincipal(c.Request.Context(), p))
		c.Next()
	}
}
