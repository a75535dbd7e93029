// Package httpapi is marketdata-svc's HTTP API: marketstack v1's endpoints,
// parameters, response shapes and error codes, with API-key auth, rate
// limits, ETags and the operational endpoints.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
	"github.com/tickerdesk/tickerdesk/pkg/apiengine"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// Limiter checks and counts a request against its key's limits.
type Limiter interface {
	Allow(ctx context.Context, p auth.Principal) ratelimit.Decision
}

// Options are the collaborators of a Server.
type Options struct {
	Store marketdata.Store
	// EODPages answers EOD queries; without it, Store's pages are encoded
	// on every request.
	EODPages EODPages
	Auth     *auth.Authenticator
	Limiter  Limiter
	// Ping checks the database for /readyz.
	Ping func(ctx context.Context) error
	// CacheStatus reports the cache backend for /readyz ("ok",
	// "unavailable", "in-process"); it never fails readiness, because the
	// service answers from the database without its cache.
	CacheStatus func(ctx context.Context) string
	// ReplicaStates reports each read replica for /readyz ("ok",
	// "behind", "unavailable"); like the cache, a replica never fails
	// readiness, because reads fall back to the primary. Nil without
	// replicas.
	ReplicaStates func() []string
	Logger        *slog.Logger
	// AccessLog writes a line per request into Logger's stream.
	AccessLog      *accesslog.Log
	Registry       *prometheus.Registry
	TrustedProxies []string
	// CORSOrigins are the browser origins allowed to call the API ("*" for
	// any); empty sends no CORS header.
	CORSOrigins []string
	// RequestTimeout bounds each request's work (0: none).
	RequestTimeout time.Duration
	// Trace are pkg/tracing's handlers, first in the chain; none when
	// tracing is off.
	Trace []gin.HandlerFunc
}

// Server is the HTTP API. Its Handler serves it and makes /readyz fail
// once SetShuttingDown is called.
type Server struct {
	*apiengine.Handler
	// o are the collaborators NewServer was given, with its defaults.
	o         Options
	openapi   []byte
	openapiV2 []byte
	docs      *apidocs.Pages
	cors      *corsPolicy
	// limitHeaders writes the limit headers (see rateLimit).
	limitHeaders keyrate.Headers
}

// NewServer builds the server and its router.
func NewServer(o Options) (*Server, error) {
	if o.Store == nil || o.Auth == nil || o.Limiter == nil || o.Logger == nil || o.AccessLog == nil || o.Registry == nil {
		return nil, errors.New("new server: store, auth, limiter, logger, access log and registry are required")
	}
	doc, err := OpenAPIJSON()
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	docV2, err := OpenAPIV2JSON()
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s := &Server{o: o, openapi: doc, openapiV2: docV2, cors: newCORSPolicy(o.CORSOrigins)}
	if s.o.EODPages == nil {
		s.o.EODPages = encodingStore{o.Store}
	}
	if s.o.Ping == nil {
		s.o.Ping = func(context.Context) error { return nil }
	}
	if s.o.CacheStatus == nil {
		s.o.CacheStatus = func(context.Context) string { return "disabled" }
	}
	if s.docs, err = newDocs(s); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	// The access log and the spans redact access_key (pkg/auth's
	// credential parameters) from the URL.
	s.Handler, err = apiengine.New(apiengine.Options{TrustedProxies: o.TrustedProxies, Log: o.Logger, Access: o.AccessLog, Registry: o.Registry,
		RequestTimeout: o.RequestTimeout, Trace: o.Trace, Fail: s.writeError, Routes: s.routes})
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	return s, nil
}

// requireScope refuses a key without scope.
func (s *Server) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, _ := auth.PrincipalFrom(c.Request.Context())
		if !p.HasScope(scope) {
			s.writeError(c, errFunctionForbidden)
			return
		}
		c.Next()
	}
}
