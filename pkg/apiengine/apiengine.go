// Package apiengine builds the gin engine both services serve their API on:
// httpedge's engine settings, then the edge every request crosses, in the
// one order both services share. The order matters (the access log and the
// metrics must see the status recovery writes; the deadline must cover the
// body drain), so it is written once, here; each service adds its routes.
package apiengine

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/httpmetrics"
	"github.com/tickerdesk/tickerdesk/pkg/recovery"
)

// Options configure New.
type Options struct {
	// TrustedProxies are the proxies whose forwarding headers count for
	// the client address; empty trusts none.
	TrustedProxies []string
	// Log receives recovered panics.
	Log *slog.Logger
	// Access writes the access log, into the same stream as Log.
	Access *accesslog.Log
	// Registry receives the HTTP metrics (pkg/httpmetrics).
	Registry prometheus.Registerer
	// RequestTimeout bounds each request; zero means none.
	RequestTimeout time.Duration
	// Private names query parameters that quote private content; the
	// access log redacts them as it does credentials.
	Private []string
	// Trace are pkg/tracing's handlers, first in the chain; none when
	// tracing is off.
	Trace []gin.HandlerFunc
	// Fail answers a request with the service's error for err; recovery
	// uses it for a panic.
	Fail func(c *gin.Context, err error)
	// Routes adds the service's routes behind the edge.
	Routes func(e *gin.Engine)
}

// Handler is a service's API as an http.Handler, with the shutting-down
// state its readiness endpoint reports. A service's Server embeds it.
type Handler struct {
	engine       *gin.Engine
	shuttingDown atomic.Bool
}

// ServeHTTP serves the API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.engine.ServeHTTP(w, r) }

// SetShuttingDown makes ShuttingDown true for good, so that readiness fails
// and load balancers stop sending traffic before the listener closes.
func (h *Handler) SetShuttingDown() { h.shuttingDown.Store(true) }

// ShuttingDown reports whether SetShuttingDown was called.
func (h *Handler) ShuttingDown() bool { return h.shuttingDown.Load() }

// Routes lists the routes the service added, so that a test can hold a
// rule to every one of them, present and future.
func (h *Handler) Routes() gin.RoutesInfo { return h.engine.Routes() }

// New returns the API: an engine with the edge installed (the tracing
// handlers, then request id, access log, metrics, deadline, body drain and
// panic recovery), then the routes.
func New(o Options) (*Handler, error) {
	if o.Access == nil || o.Log == nil {
		return nil, errors.New("api engine: a logger and an access log are required")
	}
	metrics, err := httpmetrics.NewMetrics(o.Registry)
	if err != nil {
		return nil, fmt.Errorf("api engine: %w", err)
	}
	e, err := httpedge.NewEngine(o.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("api engine: %w", err)
	}
	e.Use(o.Trace...)
	e.Use(httpedge.RequestID(), o.Access.Middleware(httpedge.ClientIP(o.TrustedProxies), o.Private...), metrics.Middleware(),
		httpedge.Timeout(o.RequestTimeout), httpedge.DrainBody, recovery.Middleware(o.Log, httpedge.RequestIDOf, o.Fail))
	o.Routes(e)
	return &Handler{engine: e}, nil
}
