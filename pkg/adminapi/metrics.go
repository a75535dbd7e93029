package adminapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Outcomes of admin requests, the values of the outcome label.
var outcomes = []string{"ok", "unauthorized", "client_error", "server_error"}

// Metrics are the admin API's metrics of one service. They are registered
// whether or not the admin API is served, so that dashboards and the
// metric lists of deploy/monitoring see them on every replica: a replica
// without the admin listener reports zeros.
type Metrics struct {
	requests                 *prometheus.CounterVec
	created, rolled, revoked prometheus.Counter
}

// NewMetrics registers the admin metrics of namespace (e.g. "notes") on
// reg, the service's /metrics registry, with the count of expired keys
// read from store at each scrape.
func NewMetrics(reg prometheus.Registerer, namespace string, store *keystore.Store) (*Metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: namespace + "_" + name, Help: help})
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: namespace + "_admin_requests_total",
			Help: "Admin API requests by outcome: ok, unauthorized, client_error, server_error."}, []string{"outcome"}),
		created: counter("admin_keys_created_total", "Keys the admin API created."),
		rolled:  counter("admin_keys_rolled_total", "Keys the admin API rolled (each gave a successor)."),
		revoked: counter("admin_keys_revoked_total", "Keys the admin API revoked."),
	}
	expired := &expiredCollector{store: store, desc: prometheus.NewDesc(namespace+"_keys_expired",
		"Keys whose expires_at has passed (not revoked before it), counted in the database at each scrape: "+
			"every replica reports the same figure, take max().", nil, nil)}
	// Every outcome exists from the start, so that increase() sees the
	// first unauthorized request as a change.
	for _, o := range outcomes {
		m.requests.WithLabelValues(o)
	}
	for _, c := range []prometheus.Collector{m.requests, m.created, m.rolled, m.revoked, expired} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("admin metrics: %w", err)
		}
	}
	return m, nil
}

// expiredCountTimeout bounds the count of expired keys at a scrape.
const expiredCountTimeout = 2 * time.Second

// expiredCollector exports the keys-expired gauge, counted in the database
// at each scrape (as marketdata's sync collector reads sync_runs): from the
// database, not from the authenticator's refusals, a key is counted once
// whichever replica refused it, and whether or not anyone used it after it
// expired. A failed count exports the last figure, since the count only
// grows; before the first success it exports nothing.
type expiredCollector struct {
	store *keystore.Store
	desc  *prometheus.Desc

	mu   sync.Mutex
	last float64
	ok   bool
}

func (c *expiredCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *expiredCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), expiredCountTimeout)
	defer cancel()
	n, err := c.store.CountExpired(ctx, time.Now())
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.last, c.ok = float64(n), true
	}
	if c.ok {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.last)
	}
}
