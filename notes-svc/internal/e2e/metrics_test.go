package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// scrape returns the body of /metrics.
func (e *env) scrape(t *testing.T) string {
	t.Helper()
	resp, err := e.srv.Client().Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// labelValues collects the distinct values of label in the samples of metric.
func labelValues(body, metric, label string) map[string]bool {
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

// TestMetricLabelsStayBounded is the regression case of the audit's
// unbounded labels (issue 12, item 1) and of their class: every part of a
// request a client chooses (method, path, query, headers, a wrong key) must
// leave /metrics with the same series. Before the fix each made-up method
// added series, and 500 of them grew /metrics by megabytes.
func TestMetricLabelsStayBounded(t *testing.T) {
	e := newEnv(t)
	warm := []req{
		{method: "GET", path: "/v1/notes", key: e.alice},
		{method: "GET", path: "/v1/notes/nope", key: e.alice},
		{method: "GET", path: "/nowhere"},
		{method: "DELETE", path: "/v1/notes"},
		{method: "GET", path: "/v1/notes", key: "tdn_wrong"},
	}
	for _, r := range warm {
		e.do(r)
	}
	before := e.scrape(t)

	client := e.srv.Client()
	for i := range 500 {
		method := fmt.Sprintf("M%d%s", i, strings.Repeat("X", 2000))
		paths := []string{"/v1/notes", fmt.Sprintf("/made/up/%d/%s", i, strings.Repeat("p", 500)),
			fmt.Sprintf("/v1/notes?x%d=%d", i, i), fmt.Sprintf("/v1/notes/%d/extra", i)}
		for _, m := range []string{method, strings.ToLower(http.MethodGet), http.MethodGet} {
			r, err := http.NewRequest(m, e.srv.URL+paths[i%len(paths)], nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set(fmt.Sprintf("X-Junk-%d", i), strings.Repeat("h", 100))
			if i%2 == 0 {
				r.Header.Set("Authorization", fmt.Sprintf("Bearer tdn_bad%d", i))
			}
			resp, err := client.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	after := e.scrape(t)

	methods := labelValues(after, "http_requests_total", "method")
	for m := range methods {
		switch m {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "OTHER":
		default:
			t.Errorf("method label %.40q is not one of the fixed set", m)
		}
	}
	for _, label := range []string{"route", "status"} {
		if b, a := len(labelValues(before, "http_requests_total", label)), len(labelValues(after, "http_requests_total", label)); a > b+3 {
			t.Errorf("%s label values grew from %d to %d", label, b, a)
		}
	}
	// A few counters change digits and the OTHER and 405/404 series appear;
	// nothing may grow with the number of requests.
	if grew := len(after) - len(before); grew > 8<<10 {
		t.Errorf("/metrics grew by %d bytes (from %d) after 1,500 hostile requests", grew, len(before))
	}
}
