// Package httpmetrics turns the parts of an HTTP request that end up in
// Prometheus labels into values from small closed sets.
//
// A label value that a client can choose is a series the client can create:
// a made-up method or an unmatched path per request grows /metrics and the
// process without bound (an audit grew notes-svc's /metrics to 242 MB with
// 2,000 requests carrying 8 KB methods, no key needed). Every label both
// services derive from a request goes through one of these functions, so
// the number of series is bounded by construction: methods by the ten
// values of Method, routes by the service's route table plus "unmatched",
// statuses by the codes net/http knows plus one value per class.
package httpmetrics

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Other is the label of every method that is not a standard one.
const Other = "OTHER"

// Unmatched is the route label of a request that matched no route.
const Unmatched = "unmatched"

// Method returns m when it is one of the methods of RFC 9110 or PATCH, and
// Other for anything else. Methods are case-sensitive (RFC 9110 9.1), so
// "get" is Other too.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return Other
}

// Route returns the route template a router matched (gin's FullPath), or
// Unmatched when it matched none. It takes the template, never the raw path:
// templates come from the service's own route table, so they are a closed
// set.
func Route(template string) string {
	if template == "" {
		return Unmatched
	}
	return template
}

// Status returns the decimal status code when net/http knows it, and the
// class ("2xx" … "5xx") otherwise. A handler can only write codes 100-999,
// so at most 63 known codes plus 9 classes exist.
func Status(code int) string {
	switch code {
	// The statuses the services answer most, without an allocation.
	case http.StatusOK:
		return "200"
	case http.StatusCreated:
		return "201"
	case http.StatusNoContent:
		return "204"
	case http.StatusNotModified:
		return "304"
	case http.StatusBadRequest:
		return "400"
	case http.StatusUnauthorized:
		return "401"
	case http.StatusNotFound:
		return "404"
	case http.StatusTooManyRequests:
		return "429"
	case http.StatusInternalServerError:
		return "500"
	case http.StatusServiceUnavailable:
		return "503"
	}
	if http.StatusText(code) != "" {
		return strconv.Itoa(code)
	}
	if code >= 100 && code <= 999 {
		return strconv.Itoa(code/100) + "xx"
	}
	return "invalid"
}

// Metrics are the request metrics both services export under the same
// names, labels and buckets, so one dashboard and one set of alerts serve
// both.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// series keeps each label set's counter and histogram (seriesKey to
	// *series): WithLabelValues hashes the labels and takes a lock on every
	// call, and the labels repeat, so each set is looked up once. The keys
	// come from the closed sets above, so the map is bounded as the series
	// are.
	series sync.Map
}

// seriesKey is one request's labels.
type seriesKey struct{ method, route, status string }

// series are the metrics of one label set.
type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// seriesOf returns the metrics of the labels, creating them once.
func (m *Metrics) seriesOf(method, route, status string) *series {
	k := seriesKey{method, route, status}
	if s, ok := m.series.Load(k); ok {
		return s.(*series)
	}
	s, _ := m.series.LoadOrStore(k, &series{
		requests: m.requests.WithLabelValues(method, route, status),
		duration: m.duration.WithLabelValues(method, route),
	})
	return s.(*series)
}

// Buckets of http_request_duration_seconds: from half a millisecond (a
// cached answer) to ten seconds (a timed-out one).
var Buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics registers http_requests_total{method,route,status},
// http_request_duration_seconds{method,route} and http_requests_in_flight
// with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total",
			Help: "HTTP requests by method, route template and status."}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds",
			Help: "HTTP request latency by method and route template.", Buckets: Buckets}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "http_requests_in_flight", Help: "HTTP requests being served."}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register http metrics: %w", err)
		}
	}
	return m, nil
}

// Middleware counts and times each request, every label mapped to its
// closed set by Method, Route and Status.
func (m *Metrics) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		c.Next()
		s := m.seriesOf(Method(c.Request.Method), Route(c.FullPath()), Status(c.Writer.Status()))
		s.requests.Inc()
		s.duration.Observe(time.Since(start).Seconds())
	}
}
