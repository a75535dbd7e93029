package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/bodydrain"
	"github.com/tickerdesk/tickerdesk/pkg/httpmetrics"
	"github.com/tickerdesk/tickerdesk/pkg/requestid"
)

const requestIDKey = "request_id"

// requestID accepts a well-formed X-Request-ID from the caller, or makes
// one (pkg/requestid, the rule both services share), and echoes it.
func (s *Server) requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := requestid.From(c.GetHeader(requestid.Header))
		c.Set(requestIDKey, id)
		c.Header(requestid.Header, id)
		c.Next()
	}
}

func requestID(c *gin.Context) string { return c.GetString(requestIDKey) }

// accessLog writes one JSON line per request. The URL is redacted and no
// header or body is logged.
func (s *Server) accessLog() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		ctx := c.Request.Context()
		if !s.log.Enabled(ctx, slog.LevelInfo) {
			return
		}
		// Typed attributes in a fixed array: no boxing, no slice growth.
		var attrs [10]slog.Attr
		a := append(attrs[:0],
			slog.String("request_id", requestID(c)),
			slog.String("method", httpmetrics.Method(c.Request.Method)),
			slog.String("route", httpmetrics.Route(c.FullPath())),
			// q and tag quote note content, which never goes into logs.
			slog.String("path", auth.RedactURL(c.Request.URL, "q", "tag")),
			slog.Int("status", c.Writer.Status()),
			slog.Int("bytes", c.Writer.Size()),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("client_ip", c.ClientIP()),
		)
		if p, ok := auth.PrincipalFrom(ctx); ok {
			a = append(a, slog.String("account_id", p.AccountID), slog.String("key_id", p.KeyID))
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "request", a...)
	}
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total",
			Help: "HTTP requests by method, route template and status."}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds",
			Help: "HTTP request latency by method and route template.", Buckets: prometheus.DefBuckets}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "http_requests_in_flight", Help: "HTTP requests being served."}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// instrument counts requests by method, route template and status, each
// mapped to a closed set by httpmetrics: a client must not be able to add
// series.
func (s *Server) instrument() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		c.Next()
		method, route := httpmetrics.Method(c.Request.Method), httpmetrics.Route(c.FullPath())
		s.metrics.requests.WithLabelValues(method, route, httpmetrics.Status(c.Writer.Status())).Inc()
		s.metrics.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
	}
}

// timeout bounds the request's context, and with it every database call.
func (s *Server) timeout() gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.requestTimeout <= 0 {
			c.Next()
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), s.requestTimeout)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

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

// drainBody lets an answer given before the body was read (413, 401, 415)
// reach a client that is still sending: see pkg/bodydrain.
func drainBody(c *gin.Context) {
	b := bodydrain.Track(c.Request)
	c.Next()
	b.Drain(c.Writer)
}
