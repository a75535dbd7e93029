package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// syncCollector exports when each provider's `marketdata-svc sync` last
// succeeded, read from sync_runs at each scrape: the sync is a short-lived
// command with nothing to scrape, so the serving instances, which share
// its database, tell Prometheus instead. A provider that has run but never
// succeeded reads 0, so the staleness alert fires for it too.
type syncCollector struct {
	store *ingest.Store
	desc  *prometheus.Desc
}

func newSyncCollector(store *ingest.Store) *syncCollector {
	return &syncCollector{store: store, desc: prometheus.NewDesc("marketdata_sync_last_success_timestamp_seconds",
		"When marketdata-svc sync last synced every symbol from provider (Unix seconds; 0: never).", []string{"provider"}, nil)}
}

func (c *syncCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect reads the table with a short deadline; a failed read exports
// nothing (the series go stale), never an error page.
func (c *syncCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	last, err := c.store.SyncLastSuccess(ctx)
	if err != nil {
		return
	}
	for provider, t := range last {
		v := 0.0
		if !t.IsZero() {
			v = float64(t.UnixNano()) / 1e9
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, provider)
	}
}
