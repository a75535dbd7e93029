package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
)

// TestMetricLabelsStayBounded is the regression case of the audit's
// unbounded labels (an outside audit's finding) and of their class: every part of a
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
	telemetrytest.LabelsStayBounded(t, e.srv.Client(), e.srv.URL, func(i int) (string, http.Header) {
		paths := []string{"/v1/notes", fmt.Sprintf("/made/up/%d/%s", i, strings.Repeat("p", 500)),
			fmt.Sprintf("/v1/notes?x%d=%d", i, i), fmt.Sprintf("/v1/notes/%d/extra", i)}
		h := http.Header{}
		h.Set(fmt.Sprintf("X-Junk-%d", i), strings.Repeat("h", 100))
		if i%2 == 0 {
			h.Set("Authorization", fmt.Sprintf("Bearer tdn_bad%d", i))
		}
		return paths[i%len(paths)], h
	})
}
