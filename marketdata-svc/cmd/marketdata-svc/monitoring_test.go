package main

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
)

// monitoredMetrics is the list deploy/monitoring/check derives from the
// alert rules and dashboards: every metric of marketdata-svc they name.
const monitoredMetrics = "../../../deploy/monitoring/metrics-marketdata-svc.txt"

// missingMetrics returns the names of monitoredMetrics that have no sample
// in the /metrics scrapes.
func missingMetrics(t *testing.T, scrapes ...string) []string {
	t.Helper()
	return telemetrytest.MissingMetrics(t, monitoredMetrics, scrapes...)
}

// scrape returns r's /metrics.
func scrape(t *testing.T, r *replica) string {
	t.Helper()
	return telemetrytest.Scrape(t, client, "http://"+r.addr+"/metrics")
}
