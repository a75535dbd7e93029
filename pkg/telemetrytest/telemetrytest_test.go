package telemetrytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recorder is a testing.TB that keeps failures instead of reporting them,
// so that the checks can be shown to fail. A Fatal stops its goroutine, as
// the real one does.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.fatal = true
	panic(r)
}

// run calls check with a recorder and returns it once check returned or
// stopped at a Fatal.
func run(check func(t testing.TB)) (r *recorder) {
	r = &recorder{}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	check(r)
	return r
}

func TestLabelValues(t *testing.T) {
	body := "# HELP http_requests_total x\n" +
		`http_requests_total{method="GET",route="/a",status="200"} 3` + "\n" +
		`http_requests_total{method="OTHER",route="/a",status="405"} 1` + "\n" +
		`http_requests_totally{method="PUT"} 1` + "\n"
	got := LabelValues(body, "http_requests_total", "method")
	if len(got) != 2 || !got["GET"] || !got["OTHER"] {
		t.Fatalf("LabelValues = %v, want GET and OTHER only", got)
	}
}

// TestLabelsStayBounded runs the check on a server that labels series by
// the method it is sent, as before the audit's fix: it must fail.
func TestLabelsStayBounded(t *testing.T) {
	var requests atomic.Int64
	series := func(bounded bool) http.Handler {
		methods := map[string]bool{}
		var mu sync.Mutex
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if r.URL.Path != "/metrics" {
				requests.Add(1)
				m := r.Method
				if bounded && m != http.MethodGet {
					m = "OTHER"
				}
				methods[m] = true
				return
			}
			for m := range methods {
				fmt.Fprintf(w, "http_requests_total{method=%q,route=\"/\",status=\"200\"} 1\n", m)
			}
		})
	}
	hostile := func(i int) (string, http.Header) {
		return fmt.Sprintf("/x%d", i), http.Header{"X-Junk": {strings.Repeat("h", 10)}}
	}
	for _, bounded := range []bool{true, false} {
		ts := httptest.NewServer(series(bounded))
		r := run(func(t testing.TB) { LabelsStayBounded(t, ts.Client(), ts.URL, hostile) })
		ts.Close()
		if bounded && len(r.errors) != 0 {
			t.Errorf("bounded labels: %q", r.errors)
		}
		if !bounded && len(r.errors) == 0 {
			t.Error("a label per made-up method passed")
		}
	}
	if n := requests.Load(); n != 2*1500 {
		t.Errorf("%d requests, want 1,500 a run", n)
	}
}

func span(name string, kind trace.SpanKind, id, parent byte, attrs ...attribute.KeyValue) tracetest.SpanStub {
	tid := trace.TraceID{1}
	s := tracetest.SpanStub{Name: name, SpanKind: kind, Attributes: attrs,
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{id}})}
	if parent != 0 {
		s.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{parent}})
	}
	return s
}

func TestSpans(t *testing.T) {
	server := span("GET /v1/x", trace.SpanKindServer, 1, 0)
	query := span("query", trace.SpanKindClient, 2, 1, attribute.String("db.query.text", "SELECT 1"))
	row := span("row", trace.SpanKindInternal, 3, 2)
	stray := span("poll", trace.SpanKindClient, 4, 9)
	spans := []tracetest.SpanStub{server, query, row, stray}

	if got := OnlyServerSpan(t, spans, "GET /v1/x"); got.Name != server.Name {
		t.Errorf("OnlyServerSpan = %q", got.Name)
	}
	if r := run(func(t testing.TB) { OnlyServerSpan(t, append(spans, server), "GET /v1/x") }); !r.fatal {
		t.Error("OnlyServerSpan accepted two server spans")
	}
	if !Descends(row, server, spans) || !Descends(query, server, spans) || Descends(stray, server, spans) || Descends(server, server, spans) {
		t.Error("Descends: want row and query under the server span, the stray poll and the server itself not")
	}

	var many []tracetest.SpanStub
	for i := range 5 {
		many = append(many, span(fmt.Sprint(i), trace.SpanKindClient, byte(i+1), 0, attribute.String("k", "v")))
	}
	if r := run(func(t testing.TB) { NoSecret(t, many, "sk_live") }); len(r.errors) != 0 {
		t.Errorf("NoSecret on clean spans: %q", r.errors)
	}
	many[3].Attributes = append(many[3].Attributes, attribute.String("url.query", "access_key=sk_live_1"))
	if r := run(func(t testing.TB) { NoSecret(t, many, "sk_live") }); len(r.errors) != 1 {
		t.Errorf("NoSecret with a key in an attribute: %q, want one failure", r.errors)
	}
	if r := run(func(t testing.TB) { NoSecret(t, many[:1], "sk_live") }); !r.fatal {
		t.Error("NoSecret passed on too few texts to mean anything")
	}
}
