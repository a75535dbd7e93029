package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// Instrumentation scopes of the PostgreSQL and Redis spans.
const (
	pgxScope   = "github.com/exaring/otelpgx"
	redisScope = "github.com/redis/go-redis/extra/redisotel"
)

// newTracedE2E is the end-to-end server recording its spans in memory,
// with what its setup recorded dropped.
func newTracedE2E(t *testing.T) (*e2e, *tracetest.InMemoryExporter) {
	t.Helper()
	rec := tracetest.NewInMemoryExporter()
	tr, err := tracing.New(context.Background(), tracing.Settings{}, tracing.Options{Service: "marketdata-svc", Exporter: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	e := newE2EWith(t, e2eOptions{seed: seed, tracing: tr})
	rec.Reset()
	return e, rec
}

// An EOD miss reads PostgreSQL and fills Redis under the request's server
// span; the same request again is answered from the cache with no
// statement at all. Neither trace quotes the key, sent both as access_key
// and as a bearer token.
func TestTracingEODMissThenHit(t *testing.T) {
	e, rec := newTracedE2E(t)
	params := url.Values{"symbols": {"GOOG"}, "limit": {"3"}}
	get := func() []tracetest.SpanStub {
		t.Helper()
		rec.Reset()
		if w := e.get(t, "/v1/eod", params, "Authorization", "Bearer "+e.key); w.Code != http.StatusOK {
			t.Fatalf("GET /v1/eod: %d %s", w.Code, w.Body.Bytes())
		}
		return rec.GetSpans()
	}

	miss := get()
	t.Logf("miss: %q", telemetrytest.SpanNames(miss))
	server := telemetrytest.OnlyServerSpan(t, miss, "GET /v1/eod")
	pg, rd := underServer(t, miss, server)
	if pg == 0 || rd == 0 {
		t.Errorf("miss: %d PostgreSQL and %d Redis spans under the server span, want both", pg, rd)
	}
	telemetrytest.NoSecret(t, miss, e.key)

	hit := get()
	t.Logf("hit: %q", telemetrytest.SpanNames(hit))
	server = telemetrytest.OnlyServerSpan(t, hit, "GET /v1/eod")
	if pg, _ := underServer(t, hit, server); pg != 0 {
		t.Errorf("hit: %d PostgreSQL spans, want none: the page comes from the cache", pg)
	}
	telemetrytest.NoSecret(t, hit, e.key)
}

// A gateway's traceparent makes the server span its remote child, and
// every span of the request joins the gateway's trace.
func TestTracingContinuesGatewayTrace(t *testing.T) {
	e, rec := newTracedE2E(t)
	const traceID, parentID = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
	w := e.get(t, "/v1/tickers", url.Values{"symbols": {"GOOG"}}, "traceparent", "00-"+traceID+"-"+parentID+"-01")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /v1/tickers: %d %s", w.Code, w.Body.Bytes())
	}
	spans := rec.GetSpans()
	server := telemetrytest.OnlyServerSpan(t, spans, "GET /v1/tickers")
	if server.Parent.SpanID().String() != parentID || !server.Parent.IsRemote() {
		t.Errorf("server span parent %s (remote %v), want the gateway's %s", server.Parent.SpanID(), server.Parent.IsRemote(), parentID)
	}
	for _, s := range spans {
		// A root span other than the server's is the server's own
		// background work (the data version's poll of Redis), recorded
		// while the request ran; that the request's work sits under its
		// server span is TestTracingEODMissThenHit's check.
		if !s.Parent.IsValid() && s.SpanKind != trace.SpanKindServer {
			continue
		}
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %q in trace %s, want the gateway's %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
	}
	if len(spans) < 2 {
		t.Errorf("spans %q: want the server span and what it did", telemetrytest.SpanNames(spans))
	}
}

// underServer checks that every other span of server's trace descends
// from it, and counts the PostgreSQL and Redis client spans among them.
// Spans of other traces are background work that no request started (the
// data version poller's reads of Redis).
func underServer(t *testing.T, spans []tracetest.SpanStub, server tracetest.SpanStub) (pg, rd int) {
	t.Helper()
	for _, s := range spans {
		if s.SpanContext.SpanID() == server.SpanContext.SpanID() || s.SpanContext.TraceID() != server.SpanContext.TraceID() {
			continue
		}
		if !telemetrytest.Descends(s, server, spans) {
			t.Errorf("span %q (scope %s) is not under the server span", s.Name, s.InstrumentationScope.Name)
		}
		switch s.InstrumentationScope.Name {
		case pgxScope:
			pg++
		case redisScope:
			rd++
		}
		if (s.InstrumentationScope.Name == pgxScope || s.InstrumentationScope.Name == redisScope) && s.SpanKind != trace.SpanKindClient {
			t.Errorf("span %q is of kind %v, want client", s.Name, s.SpanKind)
		}
	}
	return pg, rd
}
