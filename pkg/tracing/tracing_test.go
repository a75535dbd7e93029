package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, ""},
		{map[string]string{"OTEL_TRACES_EXPORTER": " OTLP "}, "otlp"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, "console"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, ""},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "false"}, "otlp"},
		// The SDK's own default exporter is otlp; here unset means off.
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ""},
	} {
		s := tracing.FromEnv(func(k string) string { return tc.env[k] })
		if s.Exporter != tc.want || s.Enabled() != (tc.want != "") {
			t.Errorf("FromEnv(%v) = %+v (enabled %v), want exporter %q", tc.env, s, s.Enabled(), tc.want)
		}
	}
}

func TestOffInstallsNothing(t *testing.T) {
	tr, err := tracing.New(context.Background(), tracing.FromEnv(func(string) string { return "" }), tracing.Options{Service: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if tr != nil || tr.Enabled() {
		t.Fatalf("New with tracing off = %v, want nil", tr)
	}
	if h := tr.Middleware(); h != nil {
		t.Errorf("Middleware() with tracing off = %d handlers, want none", len(h))
	}
	if pt := tr.PgxTracer(); pt != nil {
		t.Errorf("PgxTracer() with tracing off = %T, want nil", pt)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of nil tracing: %v", err)
	}
}

func TestUnknownExporterFails(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "carrier-pigeon")
	_, err := tracing.New(context.Background(), tracing.Settings{Exporter: "carrier-pigeon"}, tracing.Options{Service: "svc"})
	if err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Fatalf("New with an unknown exporter: err = %v, want one naming it", err)
	}
}

// traced is a gin engine behind tracing's middleware, recording spans, with
// one route whose handler records what it saw of the request and starts a
// child span from the request's context.
type traced struct {
	engine   *gin.Engine
	rec      *tracetest.InMemoryExporter
	tr       *tracing.Tracing
	gotKey   string
	gotAuth  string
	gotQuery string
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	x := &traced{rec: tracetest.NewInMemoryExporter(), engine: gin.New()}
	var err error
	x.tr, err = tracing.New(context.Background(), tracing.Settings{}, tracing.Options{Service: "svc", Version: "test", Private: []string{"q"}, Exporter: x.rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.tr.Shutdown(context.Background()) })
	x.engine.Use(x.tr.Middleware()...)
	x.engine.GET("/v1/things/:id", func(c *gin.Context) {
		x.gotKey, x.gotAuth, x.gotQuery = c.Query("access_key"), c.GetHeader("Authorization"), c.Query("q")
		_, span := x.tr.TracerProvider().Tracer("test").Start(c.Request.Context(), "work")
		span.End()
		c.String(http.StatusOK, "ok")
	})
	return x
}

func (x *traced) get(t *testing.T, target string, header http.Header) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	x.engine.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", target, w.Code)
	}
}

func TestMiddlewareKeepsCredentialsOutOfSpans(t *testing.T) {
	x := newTraced(t)
	const queryKey, bearerKey, private = "mdk_querysecret0123456789", "nts_bearersecret0123456789", "privatewords"
	x.get(t, "/v1/things/42?symbols=GOOG&access_key="+queryKey+"&q="+private+"&Access%5FKey="+queryKey,
		http.Header{"Authorization": {"Bearer " + bearerKey}, "User-Agent": {"probe"}})

	// The handlers still see the request as sent.
	if x.gotKey != queryKey || x.gotAuth != "Bearer "+bearerKey || x.gotQuery != private {
		t.Fatalf("handler saw access_key %q, Authorization %q, q %q: the original request must reach it", x.gotKey, x.gotAuth, x.gotQuery)
	}
	spans := x.rec.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the server span and the handler's", len(spans))
	}
	var attrs int
	for _, s := range spans {
		for _, kv := range append(s.Attributes, s.Resource.Attributes()...) {
			attrs++
			v := kv.Value.String()
			for _, secret := range []string{queryKey, bearerKey, private} {
				if strings.Contains(v, secret) || strings.Contains(string(kv.Key), secret) {
					t.Errorf("span %q attribute %s=%q quotes %q", s.Name, kv.Key, v, secret)
				}
			}
		}
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				if v := kv.Value.String(); strings.Contains(v, queryKey) || strings.Contains(v, bearerKey) {
					t.Errorf("span %q event %q attribute %s quotes a key", s.Name, ev.Name, kv.Key)
				}
			}
		}
		if strings.Contains(s.Name, queryKey) || strings.Contains(s.Name, bearerKey) {
			t.Errorf("span name %q quotes a key", s.Name)
		}
	}
	if attrs < 5 {
		t.Fatalf("only %d attributes looked at: the check would pass vacuously", attrs)
	}
}

func TestServerSpanIsParentOfHandlerSpans(t *testing.T) {
	x := newTraced(t)
	x.get(t, "/v1/things/42", nil)
	server, work := spanNamed(t, x.rec, "GET /v1/things/:id"), spanNamed(t, x.rec, "work")
	if server.SpanKind != trace.SpanKindServer {
		t.Errorf("server span kind %v", server.SpanKind)
	}
	if server.Parent.IsValid() {
		t.Errorf("server span has parent %v with no traceparent sent", server.Parent)
	}
	if work.Parent.SpanID() != server.SpanContext.SpanID() || work.SpanContext.TraceID() != server.SpanContext.TraceID() {
		t.Errorf("handler span's parent %v, want the server span %v", work.Parent, server.SpanContext)
	}
	if !hasAttr(server, "http.route", "/v1/things/:id") {
		t.Errorf("server span attributes %v lack http.route", server.Attributes)
	}
}

func TestIncomingTraceparentIsContinued(t *testing.T) {
	x := newTraced(t)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	x.get(t, "/v1/things/42", http.Header{"Traceparent": {"00-" + traceID + "-" + parentID + "-01"}})
	server := spanNamed(t, x.rec, "GET /v1/things/:id")
	if got := server.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("server span trace id %s, want the gateway's %s", got, traceID)
	}
	if got := server.Parent.SpanID().String(); got != parentID || !server.Parent.IsRemote() {
		t.Errorf("server span parent %s (remote %v), want the gateway's span %s", got, server.Parent.IsRemote(), parentID)
	}
	work := spanNamed(t, x.rec, "work")
	if work.SpanContext.TraceID().String() != traceID {
		t.Errorf("handler span trace id %s, want %s", work.SpanContext.TraceID(), traceID)
	}
}

func spanNamed(t *testing.T, rec *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var names []string
	for _, s := range rec.GetSpans() {
		if s.Name == name {
			return s
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key && kv.Value.String() == value {
			return true
		}
	}
	return false
}
