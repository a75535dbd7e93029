// Package telemetrytest holds the checks both services' tests make of the
// telemetry they export for operators: Prometheus scrapes (the monitored
// metric list, bounded labels) and recorded spans (one server span per
// request, the request's work under it, no secret in any of them). Both
// services must pass the same checks, so the checks are written once.
package telemetrytest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tickerdesk/tickerdesk/pkg/metricslist"
)

// Scrape returns the body of a GET of url (a /metrics endpoint) with c,
// failing t unless it answers 200.
func Scrape(t testing.TB, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// MissingMetrics returns the names listed in the file at listPath
// (deploy/monitoring's metrics-<svc>.txt, derived from the alert rules and
// dashboards) that have no sample in any of scrapes.
func MissingMetrics(t testing.TB, listPath string, scrapes ...string) []string {
	t.Helper()
	list, err := os.ReadFile(listPath)
	if err != nil {
		t.Fatal(err)
	}
	return metricslist.Missing(string(list), scrapes...)
}

// LabelValues collects the distinct values of label in the samples of
// metric in body, a scrape in the Prometheus text format.
func LabelValues(body, metric, label string) map[string]bool {
	values := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		if i := strings.Index(line, label+`="`); i >= 0 {
			rest := line[i+len(label)+2:]
			values[rest[:strings.IndexByte(rest, '"')]] = true
		}
	}
	return values
}

// Hostile is what a client chooses in the i-th round of LabelsStayBounded
// beyond its method: the path (with query) and headers to send.
type Hostile func(i int) (target string, header http.Header)

// LabelsStayBounded is the check of the audit's unbounded labels (issue
// 12, item 1) and of their class: whatever a client chooses (method,
// path, query, headers, a wrong key) must leave base+"/metrics" with the
// same series. The caller warms the server up first, so that the series
// of ordinary answers exist; then 500 rounds send hostile(i)'s target and
// headers, each with a made-up 2,000-character method, "get" and GET.
// Method labels must stay in the fixed set, route and status labels may
// gain no more than a few values (the OTHER method's answers), and
// /metrics may grow by no more than counters changing digits.
func LabelsStayBounded(t testing.TB, c *http.Client, base string, hostile Hostile) {
	t.Helper()
	const metric = "http_requests_total"
	before := Scrape(t, c, base+"/metrics")
	for i := range 500 {
		target, header := hostile(i)
		method := fmt.Sprintf("M%d%s", i, strings.Repeat("X", 2000))
		for _, m := range []string{method, strings.ToLower(http.MethodGet), http.MethodGet} {
			r, err := http.NewRequest(m, base+target, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range header {
				r.Header[k] = v
			}
			resp, err := c.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	after := Scrape(t, c, base+"/metrics")

	for m := range LabelValues(after, metric, "method") {
		switch m {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "OTHER":
		default:
			t.Errorf("method label %.40q is not one of the fixed set", m)
		}
	}
	for _, label := range []string{"route", "status"} {
		if b, a := len(LabelValues(before, metric, label)), len(LabelValues(after, metric, label)); a > b+3 {
			t.Errorf("%s label values grew from %d to %d", label, b, a)
		}
	}
	if grew := len(after) - len(before); grew > 8<<10 {
		t.Errorf("/metrics grew by %d bytes (from %d) after 1,500 hostile requests", grew, len(before))
	}
}

// SpanNames returns the names of spans, for messages.
func SpanNames(spans []tracetest.SpanStub) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

// OnlyServerSpan returns the one server span among spans, failing t unless
// there is exactly one and it is named name (the request's route).
func OnlyServerSpan(t testing.TB, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanKind == trace.SpanKindServer {
			found = append(found, s)
		}
	}
	if len(found) != 1 || found[0].Name != name {
		t.Fatalf("server spans %q, want one named %q", SpanNames(found), name)
	}
	return found[0]
}

// Descends reports whether s is under root, following parents through
// spans; a parent that was not recorded ends the walk.
func Descends(s, root tracetest.SpanStub, spans []tracetest.SpanStub) bool {
	byID := make(map[trace.SpanID]tracetest.SpanStub, len(spans))
	for _, sp := range spans {
		byID[sp.SpanContext.SpanID()] = sp
	}
	// At most one step a span: a cycle of recorded parents cannot loop.
	for range len(spans) + 1 {
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

// NoSecret fails t when a name, status, attribute, resource attribute or
// event attribute of spans quotes one of secrets. It fails too when spans
// hold fewer than ten such texts, since the check would then pass
// vacuously.
func NoSecret(t testing.TB, spans []tracetest.SpanStub, secrets ...string) {
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
					t.Errorf("span %q carries a secret: %q", s.Name, text)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d span texts looked at: the check would pass vacuously", seen)
	}
}
