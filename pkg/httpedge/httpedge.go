// Package httpedge is the gin edge both services put in front of their
// handlers: the engine's settings, the request id and the request deadline.
// A request crossing both services must be treated alike by each, so these
// live once; the access log (pkg/accesslog), metrics (pkg/httpmetrics),
// panic recovery (pkg/recovery) and early answers (pkg/bodydrain) are their
// own packages.
package httpedge

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/bodydrain"
	"github.com/tickerdesk/tickerdesk/pkg/requestid"
)

// NewEngine returns a gin engine with no middleware and the settings both
// APIs rely on: 405 answers for a known path with another method; no
// redirects, which would answer outside the service's error format and
// invite clients to retry writes at another path; routing on the escaped
// path, so that %2F inside a path value (a symbol, a note id) stays part of
// that value instead of reaching another route; request contexts reachable
// through gin's context; and forwarding headers honoured only from
// trustedProxies (none when empty).
func NewEngine(trustedProxies []string) (*gin.Engine, error) {
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.UseRawPath = true
	e.UnescapePathValues = true
	e.ContextWithFallback = true
	if err := e.SetTrustedProxies(trustedProxies); err != nil {
		return nil, fmt.Errorf("new engine: trusted proxies: %w", err)
	}
	return e, nil
}

// requestIDHeader is requestid.Header in canonical form: reading and
// writing the header maps with it directly skips canonicalising, which
// allocates a new string for this key on every request.
var requestIDHeader = http.CanonicalHeaderKey(requestid.Header)

// RequestID keeps a well-formed X-Request-ID of the caller's, or makes one
// (pkg/requestid's rule), and echoes it in the response. The response
// header is the only place the id is kept: storing it in gin's key map as
// well cost a map and a lock on every request, for a value already at hand.
func RequestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		callers := ""
		if v := c.Request.Header[requestIDHeader]; len(v) > 0 {
			callers = v[0]
		}
		c.Writer.Header()[requestIDHeader] = []string{requestid.From(callers)}
		c.Next()
	}
}

// RequestIDOf returns the id RequestID gave the request: the one its
// response carries. It is empty outside RequestID.
func RequestIDOf(c *gin.Context) string {
	if v := c.Writer.Header()[requestIDHeader]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Timeout bounds the request's context, and with it every database and
// cache call made for it; zero means no bound. The context reports its
// deadline at once, but arms a timer only when something waits on it (see
// deadlineCtx).
func Timeout(d time.Duration) gin.HandlerFunc {
	ended := endedCtx()
	return func(c *gin.Context) {
		if d <= 0 {
			c.Next()
			return
		}
		ctx := &deadlineCtx{Context: c.Request.Context(), deadline: time.Now().Add(d), ended: ended}
		defer ctx.end()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// DrainBody lets an answer given before the body was read (413, 401, 415,
// or any answer of an API that takes no body) reach a client that is still
// sending: see pkg/bodydrain.
func DrainBody(c *gin.Context) {
	b := bodydrain.Track(c.Request)
	c.Next()
	b.Drain(c.Writer)
}
