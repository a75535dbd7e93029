package httpapi

import (
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/ginauth"
)

// Scopes an API key needs.
const (
	scopeRead  = "notes:read"
	scopeWrite = "notes:write"
)

// PrivateParams returns the query parameters that quote note content:
// redacted from access logs and spans like keys.
func PrivateParams() []string { return []string{"q", "tag"} }

// routes lists the whole API surface on e, behind the edge both services
// share (pkg/apiengine).
func (s *Server) routes(e *gin.Engine) {
	e.NoRoute(func(c *gin.Context) { s.fail(c, errRouteNotFound) })
	e.NoMethod(func(c *gin.Context) { s.fail(c, errMethodNotAllowed) })

	// Operability: no key needed, no database touched except by /readyz.
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry})))
	e.GET("/v1/openapi.json", s.openAPI)
	// The interactive reference of that document (pkg/apidocs): no key, no
	// database.
	e.GET("/docs", s.docs.Page)
	e.GET("/docs/*asset", s.docs.Asset)

	// Every request with a valid key counts against the key's rate.
	authn := []gin.HandlerFunc{ginauth.Middleware(s.auth, auth.BearerHeader(), s.fail)}
	if s.limiter != nil {
		authn = append(authn, s.rateLimit)
	}
	v1 := e.Group("/v1", authn...)
	s.noteRoutes(v1)
	// The feed is new in /v1 and has no unversioned alias.
	v1.GET("/events", s.requireScope(scopeRead), s.listEvents)
	s.webhookRoutes(v1)

	// The spec's listing example uses /notes: served as a deprecated alias
	// of /v1 (docs/API.md, "Unversioned alias").
	alias := e.Group("", append([]gin.HandlerFunc{s.deprecatedAlias()}, authn...)...)
	s.noteRoutes(alias)
}

func (s *Server) noteRoutes(g *gin.RouterGroup) {
	read, write := s.requireScope(scopeRead), s.requireScope(scopeWrite)
	g.POST("/notes", write, s.createNote)
	g.GET("/notes", read, s.listNotes)
	g.GET("/notes/:id", read, s.getNote)
	g.PUT("/notes/:id", write, s.replaceNote)
	g.PATCH("/notes/:id", write, s.patchNote)
	g.DELETE("/notes/:id", write, s.deleteNote)
	g.POST("/notes/:id/trash", write, s.moveNote(s.notes.Trash))
	g.POST("/notes/:id/restore", write, s.moveNote(s.notes.Restore))
}

// webhookRoutes are served under /v1 only: they came after the
// unversioned alias was frozen.
func (s *Server) webhookRoutes(g *gin.RouterGroup) {
	read, write := s.requireScope(scopeRead), s.requireScope(scopeWrite)
	endpoints := g.Group("/webhook_endpoints")
	endpoints.POST("", write, s.createEndpoint)
	endpoints.GET("", read, s.listEndpoints)
	one := endpoints.Group("/:id")
	one.GET("", read, s.getEndpoint)
	one.PATCH("", write, s.patchEndpoint)
	one.DELETE("", write, s.deleteEndpoint)
	one.POST("/rotate_secret", write, s.rotateSecret)
	deliveries := one.Group("/deliveries")
	deliveries.GET("", read, s.listDeliveries)
	deliveries.POST("/:delivery_id/retry", write, s.retryDelivery)
}
