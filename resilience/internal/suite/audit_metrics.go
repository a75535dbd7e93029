package suite

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
)

// AuditMetricLabels reproduces an outside audit's finding: made-up HTTP methods became label
// values, so 2,000 requests with 8 KB methods, no key needed, grew
// notes-svc's /metrics from 29.5 KB to 242 MB. The class is every part of a
// request a client chooses that could reach a label: the method, the path of
// an unmatched route, the query, the status it provokes. Against both real
// binaries this sends 1,000 requests with distinct 8 KB methods, 1,000 with
// distinct unmatched paths and 1,000 with lowercase or odd standard-looking
// methods, and compares /metrics before and after.
func AuditMetricLabels(ctx context.Context, e *Env) {
	for _, svc := range []*harness.Service{e.Notes, e.Market} {
		s := e.Report.Scenario("Made-up methods and paths against /metrics (" + svc.Name + ")")
		size := func() int {
			req, _ := http.NewRequest(http.MethodGet, svc.URL("/metrics"), nil)
			r, err := e.Do(req)
			if err != nil {
				return -1
			}
			return len(r.Body)
		}
		before := size()
		statuses := map[int]int{}
		send := func(method, path string) {
			req, err := http.NewRequestWithContext(ctx, method, svc.URL(""), nil)
			if err != nil {
				statuses[-1]++
				return
			}
			setRawPath(req, path)
			r, err := e.Do(req)
			s.Sent++
			if err != nil {
				statuses[0]++
				return
			}
			statuses[r.Status]++
		}
		base := "/v1/eod"
		if svc == e.Notes {
			base = "/v1/notes"
		}
		odd := []string{"get", "Get", "PROPFIND", "BREW", "M-SEARCH", "QUERY"}
		for i := range 1000 {
			if ctx.Err() != nil {
				return
			}
			send(fmt.Sprintf("X%04d%s", i, strings.Repeat("M", 8<<10)), base)
			send(http.MethodGet, fmt.Sprintf("/made-up/%d/%s?q=%d", i, strings.Repeat("p", 200), i))
			send(odd[i%len(odd)], fmt.Sprintf("%s/%d", base, i))
		}
		after := size()
		s.Check("/metrics stays the same size", before > 0 && after > 0 && after-before < 16<<10,
			"%.1f KB before, %.1f KB after 3,000 requests (1,000 with 8 KB made-up methods)", float64(before)/1024, float64(after)/1024)
		other, err := e.Metric(svc, "http_requests_total", `method="OTHER"`)
		s.Check("made-up methods are counted under OTHER", err == nil && other >= 2000, "OTHER %.0f (%v)", other, err)
		s.Note("answers: %s", statusString(statuses))
	}
}
