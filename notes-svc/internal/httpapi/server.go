// Package httpapi is the HTTP interface of notes-svc: routes, handlers,
// middleware, RFC 9457 errors and the embedded OpenAPI document.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
	"github.com/tickerdesk/tickerdesk/pkg/apiengine"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// Options wire a Server.
type Options struct {
	Notes *notes.Service
	Auth  *auth.Authenticator
	// Ping checks the database for /readyz.
	Ping func(context.Context) error
	// DBStats, when set, exports the pool's statistics on /metrics
	// (pkg/postgres.PoolCollector).
	DBStats prometheus.Collector
	Log     *slog.Logger
	// AccessLog writes a line per request into Log's stream.
	AccessLog *accesslog.Log
	// RequestTimeout bounds each API request; zero means none.
	RequestTimeout time.Duration
	// TrustedProxies are the proxies whose forwarding headers count for
	// the client address; empty trusts none.
	TrustedProxies []string
	// Version is reported by the notes_build_info metric.
	Version string
	// Trace are pkg/tracing's handlers, first in the chain; none when
	// tracing is off.
	Trace []gin.HandlerFunc
	// RateLimit bounds each API key's requests; nil means no limit.
	RateLimit *keyrate.Limiter
	// Webhooks serves /v1/webhook_endpoints; without it those routes
	// answer 404.
	Webhooks *webhook.Service
}

// Server handles the notes API. Its Handler serves it and makes /readyz
// fail once SetShuttingDown is called.
type Server struct {
	*apiengine.Handler
	notes    *notes.Service
	webhooks *webhook.Service
	auth     *auth.Authenticator
	ping     func(context.Context) error
	log      *slog.Logger
	registry *prometheus.Registry
	openapi  []byte
	docs     *apidocs.Pages
	limiter  *keyrate.Limiter
	// limitHeaders writes the rate limit's headers (see rateLimit).
	limitHeaders keyrate.Headers
	// encoders are the noteEncoders of single-note answers.
	encoders sync.Pool
}

// NewServer returns a Server for o.
func NewServer(o Options) (*Server, error) {
	if o.Notes == nil || o.Auth == nil || o.Ping == nil || o.Log == nil || o.AccessLog == nil {
		return nil, errors.New("new server: Notes, Auth, Ping, Log and AccessLog are required")
	}
	doc, err := openAPIJSON()
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s := &Server{notes: o.Notes, auth: o.Auth, ping: o.Ping, log: o.Log, registry: prometheus.NewRegistry(), openapi: doc, limiter: o.RateLimit, webhooks: o.Webhooks}
	s.encoders.New = func() any { return newNoteEncoder() }
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.DBStats != nil {
		s.registry.MustRegister(o.DBStats)
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{Name: "notes_build_info", Help: "Build of the running notes-svc.",
		ConstLabels: prometheus.Labels{"version": o.Version}})
	buildInfo.Set(1)
	s.registry.MustRegister(buildInfo)

	if s.docs, err = newDocs(s); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	// q and tag quote note content, which never goes into logs or spans.
	s.Handler, err = apiengine.New(apiengine.Options{TrustedProxies: o.TrustedProxies, Log: o.Log, Access: o.AccessLog, Registry: s.registry,
		RequestTimeout: o.RequestTimeout, Private: PrivateParams(), Trace: o.Trace, Fail: s.fail, Routes: s.routes})
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	return s, nil
}

// Registry is the Prometheus registry behind /metrics, for extra
// collectors.
func (s *Server) Registry() *prometheus.Registry { return s.registry }
