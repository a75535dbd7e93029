package httpapi

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
)

// corsPolicy lets the browser apps of listed origins call the API. Only
// simple reads exist, so the policy is small: GET with a key in the query
// or the Authorization header, and the answer headers a client reads.
type corsPolicy struct {
	origins []string
	any     bool
}

// newCORSPolicy returns nil for an empty list: no CORS header at all.
func newCORSPolicy(origins []string) *corsPolicy {
	if len(origins) == 0 {
		return nil
	}
	return &corsPolicy{origins: origins, any: slices.Contains(origins, "*")}
}

const (
	corsExposed = "ETag, Retry-After, RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id"
	corsHeaders = "Authorization, If-None-Match, X-Request-Id"
	// corsMaxAge lets a browser reuse a preflight answer for ten minutes.
	corsMaxAge = "600"
)

func (p *corsPolicy) allows(origin string) bool {
	return origin != "" && (p.any || slices.Contains(p.origins, origin))
}

// handle marks answers to allowed origins and answers their preflight
// requests itself, before the key is asked for: a preflight carries none.
// Requests from other origins pass as if there were no policy.
func (p *corsPolicy) handle(c *gin.Context) {
	h := c.Writer.Header()
	h.Add("Vary", "Origin")
	origin := c.Request.Header.Get("Origin")
	if !p.allows(origin) {
		c.Next()
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if c.Request.Method == http.MethodOptions && c.Request.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET")
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		h.Set("Cache-Control", "no-store")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	h.Set("Access-Control-Expose-Headers", corsExposed)
	c.Next()
}
