package main

import (
	"os"
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
	list, err := os.ReadFile(monitoredMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return metricslist.Missing(string(list), scrapes...)
}
