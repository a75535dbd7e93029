package main

import (
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/metricslist"
)

// monitoredMetrics is the list deploy/monitoring/check derives from the
// alert rules and dashboards: every metric of marketdata-svc they name.
const monitoredMetrics = "../../../deploy/monitoring/metrics-marketdata-svc.txt"

// missingMetrics returns the names of monitoredMetrics that have no sample
// in the /metrics scrapes (pkg/metricslist).
func missingMetrics(t *testing.T, scrapes ...string) []string {
	t.Helper()
	list, err := os.ReadFile(monitoredMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return metricslist.Missing(string(list), scrapes...)
}

// scrape returns r's /metrics.
func scrape(t *testing.T, r *replica) string {
	t.Helper()
	res, err := client.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", res.StatusCode, err)
	}
	return string(b)
}
