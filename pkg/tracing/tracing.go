// Package tracing sets up OpenTelemetry tracing the same way in both
// services: configured by the standard OTEL_* variables, off unless
// OTEL_TRACES_EXPORTER names an exporter, W3C trace context in and out,
// and no credential in any span.
//
// Off is the default and costs nothing: Middleware and PgxTracer then
// return nil, so the hot paths measured by make bench run exactly as
// before, with no no-op span per request or statement.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Settings are what the OTEL_* environment says about tracing, as far as
// the service decides itself; the OTel SDK reads the rest (endpoint,
// protocol, headers, sampler, batching, resource) on its own.
type Settings struct {
	// Exporter is OTEL_TRACES_EXPORTER ("otlp", "console"), or "" when
	// tracing is off.
	Exporter string
}

// FromEnv reads Settings through getenv. Unlike the OTel SDK, whose
// default exporter is otlp, an unset OTEL_TRACES_EXPORTER means off:
// tracing is opted into per deployment. "none" and OTEL_SDK_DISABLED=true
// also mean off.
func FromEnv(getenv func(string) string) Settings {
	exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if exp == "none" || strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		exp = ""
	}
	return Settings{Exporter: exp}
}

// Enabled reports whether spans are recorded and exported.
func (s Settings) Enabled() bool { return s.Exporter != "" }

// LogValue implements slog.LogValuer: whether tracing is on, and the
// exporter's name. The OTLP endpoint and headers are never logged, since
// either may carry a credential.
func (s Settings) LogValue() slog.Value {
	exp := s.Exporter
	if exp == "" {
		exp = "none"
	}
	return slog.GroupValue(slog.Bool("enabled", s.Enabled()), slog.String("exporter", exp))
}

// Options complete Settings for New.
type Options struct {
	// Service is the default service.name; OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override it.
	Service string
	// Version is service.version.
	Version string
	// Private names query parameters that quote private content (as
	// given to the access log); they are redacted from spans like keys.
	Private []string
	// Exporter, when set, receives the spans synchronously instead of the
	// exporter OTEL_TRACES_EXPORTER names, and turns tracing on whatever
	// Settings say; tests pass an in-memory one.
	Exporter sdktrace.SpanExporter
}

// Tracing is the process's tracer provider and propagator. A nil
// *Tracing is tracing switched off; all its methods accept it.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
	service    string
	private    []string
}

// New returns the tracing s and o describe, or nil (with no error) when
// tracing is off. Shutdown must be called before the process exits, to
// export the spans still buffered.
func New(ctx context.Context, s Settings, o Options) (*Tracing, error) {
	var spanOpt sdktrace.TracerProviderOption
	switch {
	case o.Exporter != nil:
		spanOpt = sdktrace.WithSyncer(o.Exporter)
	case !s.Enabled():
		return nil, nil
	default:
		// autoexport reads OTEL_TRACES_EXPORTER from the process
		// environment, as the whole SDK does; Settings came from the same
		// variable.
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: %w", s.Exporter, err)
		}
		spanOpt = sdktrace.WithBatcher(exp)
	}
	// The environment's attributes come last so that they win over the
	// defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", o.Service), attribute.String("service.version", o.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// The sampler follows OTEL_TRACES_SAMPLER (the SDK reads it itself):
	// by default parentbased_always_on, so a gateway's sampling decision
	// in traceparent is honoured.
	return &Tracing{
		provider:   sdktrace.NewTracerProvider(spanOpt, sdktrace.WithResource(res)),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		service:    o.Service,
		private:    o.Private,
	}, nil
}

// Enabled reports whether t records spans.
func (t *Tracing) Enabled() bool { return t != nil }

// TracerProvider is the provider for instrumentation not set up here
// (the Redis client of marketdata-svc); a no-op one when t is nil.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.provider
}

// Shutdown exports the spans still buffered and stops the provider,
// waiting at most ten seconds past ctx's cancellation for a slow
// collector.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// PgxTracer traces every PostgreSQL statement, connect, prepare, batch
// and COPY of a pgx connection as a child of the caller's span, with the
// SQL text but never the arguments (a key's hash, a note's content); nil
// when t is nil, so that pgx calls no tracer at all.
func (t *Tracing) PgxTracer() pgx.QueryTracer {
	if t == nil {
		return nil
	}
	// Spans are named by the statement's verb (otelpgx's default), the SQL
	// text is an attribute.
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(t.provider), otelpgx.WithMeterProvider(noop.NewMeterProvider()))
}

// Middleware returns the gin handlers that trace each request, to go
// first in the engine's chain; none when t is nil. The server span is
// named by method and route template, continues the trace of an incoming
// W3C traceparent, and is the parent of every span the request's context
// reaches.
//
// otelgin reads the request it is given; that request is a copy with
// credential query parameters redacted (pkg/auth, as in the access log)
// and no Authorization header, so no span attribute can quote a key,
// whatever otelgin records now or later. The handlers after it get the
// original request, under the span's context.
func (t *Tracing) Middleware() []gin.HandlerFunc {
	if t == nil {
		return nil
	}
	traced := otelgin.Middleware(t.service,
		otelgin.WithTracerProvider(t.provider), otelgin.WithPropagators(t.propagator),
		otelgin.WithMeterProvider(noop.NewMeterProvider()))
	return []gin.HandlerFunc{
		func(c *gin.Context) {
			orig := c.Request
			c.Set(originalRequestKey, orig)
			c.Request = redacted(orig, t.private)
			c.Next()
			c.Request = orig.WithContext(c.Request.Context())
		},
		traced,
		func(c *gin.Context) {
			if orig, ok := c.Value(originalRequestKey).(*http.Request); ok {
				c.Request = orig.WithContext(c.Request.Context())
			}
		},
	}
}

// originalRequestKey holds the unredacted request while otelgin runs.
const originalRequestKey = "tracing.original_request"

// redacted returns a shallow copy of r fit for span attributes: the
// query's credential and private parameters replaced, and no
// Authorization header.
func redacted(r *http.Request, private []string) *http.Request {
	cp := r.WithContext(r.Context())
	if r.URL != nil {
		u := *r.URL
		u.RawQuery = auth.RedactQuery(u.RawQuery, private...)
		u.User = nil
		cp.URL = &u
		cp.RequestURI = u.RequestURI()
	}
	if _, ok := r.Header["Authorization"]; ok {
		h := r.Header.Clone()
		h.Del("Authorization")
		cp.Header = h
	}
	return cp
}
