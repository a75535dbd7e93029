package e2e_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// newTracedEnv is an env whose server and pool record spans in memory,
// with what its setup recorded dropped.
func newTracedEnv(t *testing.T) (*env, *tracetest.InMemoryExporter) {
	t.Helper()
	rec := tracetest.NewInMemoryExporter()
	tr, err := tracing.New(context.Background(), tracing.Settings{}, tracing.Options{Service: "notes-svc", Private: httpapi.PrivateParams(), Exporter: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	e := newEnv(t, envOptions{tracing: tr})
	rec.Reset()
	return e, rec
}

// A created note is one trace: the server span, named by its route, and
// under it the statements that authenticate the key and insert the note,
// with their SQL but never their arguments.
func TestTracingCreateNoteSpanTree(t *testing.T) {
	e, rec := newTracedEnv(t)
	const content = "tracing-private-content-7f3a"
	r := e.do(req{method: "POST", path: "/v1/notes?access_key=" + e.alice, key: e.alice,
		body: mustJSON(map[string]any{"title": "Traced", "content": content, "tags": []string{"t1"}})})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	spans := rec.GetSpans()
	t.Logf("spans: %q", telemetrytest.SpanNames(spans))
	server := telemetrytest.OnlyServerSpan(t, spans, "POST /v1/notes")
	if server.Parent.IsValid() {
		t.Errorf("server span has a parent %v with no traceparent sent", server.Parent)
	}
	var insert, keyLookup bool
	for _, s := range spans {
		if s.SpanContext.SpanID() == server.SpanContext.SpanID() {
			continue
		}
		if s.SpanContext.TraceID() != server.SpanContext.TraceID() || !telemetrytest.Descends(s, server, spans) {
			t.Errorf("span %q (parent %s) is not under the server span %s", s.Name, s.Parent.SpanID(), server.SpanContext.SpanID())
		}
		stmt := attr(s, "db.query.text")
		// GORM quotes the table's name.
		insert = insert || strings.Contains(strings.ReplaceAll(stmt, `"`, ""), "INSERT INTO notes")
		keyLookup = keyLookup || strings.Contains(stmt, "api_keys")
		if stmt != "" && s.SpanKind != trace.SpanKindClient {
			t.Errorf("statement span %q is of kind %v, want client", s.Name, s.SpanKind)
		}
	}
	if !insert || !keyLookup {
		t.Errorf("spans %v: want the key lookup and the note insert among them (insert %v, key %v)", telemetrytest.SpanNames(spans), insert, keyLookup)
	}
	telemetrytest.NoSecret(t, spans, e.alice, content)
}

// A gateway's traceparent makes the server span its child, and the
// statements stay in the gateway's trace.
func TestTracingContinuesGatewayTrace(t *testing.T) {
	e, rec := newTracedEnv(t)
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	r := e.do(req{method: "GET", path: "/v1/notes", key: e.alice, headers: []string{"traceparent", "00-" + traceID + "-" + parentID + "-01"}})
	if r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	spans := rec.GetSpans()
	if len(spans) < 2 {
		t.Fatalf("spans %v: want the server span and statements", telemetrytest.SpanNames(spans))
	}
	for _, s := range spans {
		if got := s.SpanContext.TraceID().String(); got != traceID {
			t.Errorf("span %q in trace %s, want the gateway's %s", s.Name, got, traceID)
		}
		if s.SpanKind == trace.SpanKindServer && (s.Parent.SpanID().String() != parentID || !s.Parent.IsRemote()) {
			t.Errorf("server span parent %s (remote %v), want the gateway's %s", s.Parent.SpanID(), s.Parent.IsRemote(), parentID)
		}
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}
