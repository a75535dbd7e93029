package httpapi

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/httpmetrics"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketdata_http_requests_total", Help: "HTTP requests by route template, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "marketdata_http_request_duration_seconds", Help: "HTTP request latency by route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register http metrics: %w", err)
		}
	}
	return m, nil
}

// observe counts a request. Every label goes through httpmetrics, which maps
// it to a closed set: a client must not be able to add series.
func (m *httpMetrics) observe(routeTemplate, method string, status int, elapsed time.Duration) {
	route := httpmetrics.Route(routeTemplate)
	m.requests.WithLabelValues(route, httpmetrics.Method(method), httpmetrics.Status(status)).Inc()
	m.latency.WithLabelValues(route).Observe(elapsed.Seconds())
}
