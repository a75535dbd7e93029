package httpmetrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

func TestMethod(t *testing.T) {
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"} {
		if got := Method(m); got != m {
			t.Errorf("Method(%q) = %q, want it kept", m, got)
		}
	}
	hostile := []string{"", "get", "Get", "PROPFIND", "BREW", "GET ", " GET", "GET\x00",
		strings.Repeat("A", 8<<10), "ПОЛУЧИТЬ", "G\u200bET", "M-SEARCH", "\xff\xfe"}
	for _, m := range hostile {
		if got := Method(m); got != Other {
			t.Errorf("Method(%.20q) = %.20q, want %q", m, got, Other)
		}
	}
}

func TestRoute(t *testing.T) {
	if got := Route(""); got != Unmatched {
		t.Errorf("Route(\"\") = %q, want %q", got, Unmatched)
	}
	if got := Route("/v1/notes/:id"); got != "/v1/notes/:id" {
		t.Errorf("Route kept no template: %q", got)
	}
}

func TestStatusIsAClosedSet(t *testing.T) {
	seen := map[string]bool{}
	for code := -1000; code <= 2000; code++ {
		seen[Status(code)] = true
	}
	// net/http knows 63 codes; add at most 9 classes and "invalid".
	if len(seen) > 63+9+1 {
		t.Errorf("Status produced %d distinct values over -1000..2000", len(seen))
	}
	for code, want := range map[int]string{200: "200", 201: "201", 418: "418", 299: "2xx", 599: "5xx", 0: "invalid", 1000: "invalid", -5: "invalid"} {
		if got := Status(code); got != want {
			t.Errorf("Status(%d) = %q, want %q", code, got, want)
		}
	}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			if got := Status(code); got != strings.TrimSpace(got) || len(got) != 3 {
				t.Errorf("Status(%d) = %q", code, got)
			}
		}
	}
}

func BenchmarkLabels(b *testing.B) {
	for b.Loop() {
		_ = Method("GET")
		_ = Status(200)
		_ = Route("/v1/eod")
	}
}

// TestMiddlewareCountsEachLabelSet checks the cached series land under the
// right labels: two routes, two statuses, counted apart.
func TestMiddlewareCountsEachLabelSet(t *testing.T) {
	gin.SetMode(gin.TestMode)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	e.Use(m.Middleware())
	e.GET("/a", func(c *gin.Context) { c.Status(http.StatusOK) })
	e.GET("/b/:id", func(c *gin.Context) { c.Status(http.StatusNotFound) })
	for _, path := range []string{"/a", "/a", "/b/1", "/a", "/b/2", "/nowhere"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, histograms := map[string]float64{}, 0
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "http_requests_total":
				counts[labels["method"]+" "+labels["route"]+" "+labels["status"]] = mt.GetCounter().GetValue()
			case "http_request_duration_seconds":
				histograms++
			}
		}
	}
	want := map[string]float64{"GET /a 200": 3, "GET /b/:id 404": 2, "GET " + Unmatched + " 404": 1}
	if len(counts) != len(want) {
		t.Errorf("requests series %v, want %v", counts, want)
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("requests{%s} = %v, want %v", k, counts[k], n)
		}
	}
	if histograms != 3 {
		t.Errorf("%d duration series, want 3 (one per method and route)", histograms)
	}
}
