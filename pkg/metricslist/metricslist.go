// Package metricslist checks a service's /metrics scrapes against a list of
// metric names that alert rules and dashboards watch (deploy/monitoring's
// generated metrics-<svc>.txt), so that both services' tests hold a renamed
// or dropped metric to the same rule: a rule watching a metric nobody
// exports fails silently in production.
package metricslist

import "strings"

// Missing returns the names in list (one a line; blank lines and # comments
// skipped) that have no sample in any of scrapes, in the Prometheus text
// format. The caller reads the list, so this package opens no files.
func Missing(list string, scrapes ...string) []string {
	var missing []string
	for _, name := range strings.Split(list, "\n") {
		name = strings.TrimSpace(name)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		if !hasSample(name, scrapes) {
			missing = append(missing, name)
		}
	}
	return missing
}

func hasSample(name string, scrapes []string) bool {
	for _, s := range scrapes {
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
				return true
			}
		}
	}
	return false
}
