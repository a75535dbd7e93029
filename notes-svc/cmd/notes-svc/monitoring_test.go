package main

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/metricslist"
)

// monitoredMetrics is the list deploy/monitoring/check derives from the
// alert rules and dashboards: every metric of notes-svc they name.
const monitoredMetrics = "../../../deploy/monitoring/metrics-notes-svc.txt"

// missingMetrics returns the names of monitoredMetrics that have no sample
// in the /metrics scrapes (pkg/metricslist).
func missingMetrics(t *testing.T, scrapes ...string) []string {
	t.Helper()
	missing, err := metricslist.Missing(monitoredMetrics, scrapes...)
	if err != nil {
		t.Fatal(err)
	}
	return missing
}
