package e2e_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
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
	t.Logf("spans: %q", names(spans))
	var servers []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindServer {
			servers = append(servers, s)
		}
	}
	if len(servers) != 1 || servers[0].Name != "POST /v1/notes" {
		t.Fatalf("server spans %v, want one named POST /v1/notes", names(servers))
	}
	server := servers[0]
	if server.Parent.IsValid() {
		t.Errorf("server span has a parent %v with no traceparent sent", server.Parent)
	}
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	var insert, keyLookup bool
	for _, s := range spans {
		if s.SpanContext.SpanID() == server.SpanContext.SpanID() {
			continue
		}
		if s.SpanContext.TraceID() != server.SpanContext.TraceID() || !descends(s, server, byID) {
			t.Errorf("span %q (parent %s) is not under the server span %s", s.Name, s.Parent.SpanID(), server.SpanContext.SpanID())
		}
		stmt := attr(s, "db.query.text")
		insert = insert || strings.Contains(stmt, "INSERT INTO notes")
		keyLookup = keyLookup || strings.Contains(stmt, "api_keys")
		if stmt != "" && s.SpanKind != trace.SpanKindClient {
			t.Errorf("statement span %q is of kind %v, want client", s.Name, s.SpanKind)
		}
	}
	if !insert || !keyLookup {
		t.Errorf("spans %v: want the key lookup and the note insert among them (insert %v, key %v)", names(spans), insert, keyLookup)
	}
	assertNoSecret(t, spans, e.alice, content)
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
		t.Fatalf("spans %v: want the server span and statements", names(spans))
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

// descends reports whether s is under root, following parents through
// the recorded spans.
func descends(s, root tracetest.SpanStub, byID map[trace.SpanID]tracetest.SpanStub) bool {
	for range len(byID) {
		if s.Parent.SpanID() == root.SpanContext.SpanID() {
			return true
		}
		p, ok := byID[s.Parent.SpanID()]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func names(spans []tracetest.SpanStub) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// assertNoSecret fails when any name, attribute or event attribute of
// spans quotes one of secrets.
func assertNoSecret(t *testing.T, spans []tracetest.SpanStub, secrets ...string) {
	t.Helper()
	seen := 0
	for _, s := range spans {
		texts := []string{s.Name, s.Status.Description}
		for _, kv := range append(s.Attributes, s.Resource.Attributes()...) {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				texts = append(texts, string(kv.Key)+"="+kv.Value.String())
			}
		}
		seen += len(texts)
		for _, text := range texts {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries %q", s.Name, text)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d span texts looked at: the check would pass vacuously", seen)
	}
}
