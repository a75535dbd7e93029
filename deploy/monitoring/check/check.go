// Package check reads the monitoring configuration of deploy/monitoring
// (the Prometheus rules and the Grafana dashboards), parses every PromQL
// expression in it with Prometheus's own parser, and derives what the
// repository keeps beside it: the metric names each service must export
// (metrics-<service>.txt, which the services' metrics tests assert against
// a real /metrics scrape) and the PrometheusRule object that ships the
// rules to Kubernetes.
package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Services are the jobs (Service names, the ServiceMonitors' default job
// label) whose metrics the rules and dashboards may name.
var Services = []string{"notes-svc", "marketdata-svc"}

// External are the metrics that come from elsewhere than the services, and
// where from. A selector naming any other metric must select at least one
// of Services by its job label, so that the metric can be checked against
// that service's scrape.
var External = map[string]string{
	"up":                            "Prometheus (scrape health)",
	"kube_deployment_spec_replicas": "kube-state-metrics",
	"kube_deployment_status_replicas_available":       "kube-state-metrics",
	"kube_job_status_failed":                          "kube-state-metrics",
	"patroni_primary":                                 "Patroni (the database cluster's /metrics)",
	"patroni_replica":                                 "Patroni (the database cluster's /metrics)",
	"patroni_xlog_location":                           "Patroni (the database cluster's /metrics)",
	"patroni_xlog_replayed_location":                  "Patroni (the database cluster's /metrics)",
	"pg_stat_archiver_failed_count":                   "postgres_exporter",
	"pgbackrest_backup_since_last_completion_seconds": "a pgBackRest exporter",
}

// Expr is one PromQL expression and where it was found.
type Expr struct {
	Where string
	Query string
}

func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// RuleExprs parses the Prometheus rule file at path, validating it as
// Prometheus does, and returns its expressions and the names its recording
// rules define.
func RuleExprs(path string) (exprs []Expr, recorded map[string]bool, err error) {
	groups, errs := rulefmt.ParseFile(path, false, model.UTF8Validation, newParser(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("rules: %w", errors.Join(errs...))
	}
	recorded = map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Record
			if name == "" {
				name = "alert " + r.Alert
			} else {
				recorded[r.Record] = true
			}
			exprs = append(exprs, Expr{Where: path + ": " + g.Name + ": " + name, Query: r.Expr})
		}
	}
	return exprs, recorded, nil
}

// grafanaVariables stand in for the dashboard variables that appear outside
// label values, where the parser would reject them.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "${__rate_interval}", "5m",
	"$__interval", "1m", "$__range", "1h")

// dashboard is the part of a Grafana dashboard this package reads.
type dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	// Panels are a collapsed row's panels.
	Panels []panel `json:"panels"`
}

// DashboardExprs reads the Grafana dashboard at path and returns the
// expression of every panel target, Grafana's interval variables replaced
// by durations.
func DashboardExprs(path string) ([]Expr, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", path, err)
	}
	if d.UID == "" || d.Title == "" {
		return nil, fmt.Errorf("dashboard %s: uid and title are required", path)
	}
	var exprs []Expr
	var walk func(ps []panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				return fmt.Errorf("dashboard %s: panel %q has no query", path, p.Title)
			}
			for i, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					return fmt.Errorf("dashboard %s: panel %q target %d has no expr", path, p.Title, i)
				}
				exprs = append(exprs, Expr{Where: fmt.Sprintf("%s: panel %q", path, p.Title), Query: grafanaVariables.Replace(t.Expr)})
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("dashboard %s: no queries", path)
	}
	return exprs, nil
}

// Names parses every expression and sorts the metrics they select: per
// service, the names that service must export; and the External names
// used. Names defined by recording rules are neither. A selector of a
// metric that is not External must match a service with its job label.
func Names(exprs []Expr, recorded map[string]bool) (perService map[string][]string, external []string, err error) {
	p := newParser()
	sets := map[string]map[string]bool{}
	ext := map[string]bool{}
	var errs []error
	for _, e := range exprs {
		ast, err := p.ParseExpr(e.Query)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Where, err))
			continue
		}
		for _, sel := range parser.ExtractSelectors(ast) {
			name, job := "", []*labels.Matcher(nil)
			for _, m := range sel {
				switch {
				case m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual:
					name = m.Value
				case m.Name == model.MetricNameLabel:
					errs = append(errs, fmt.Errorf("%s: a metric name must be spelled out, not matched (%s)", e.Where, m))
				case m.Name == "job":
					job = append(job, m)
				}
			}
			switch {
			case name == "" || recorded[name]:
				continue
			case External[name] != "":
				ext[name] = true
				continue
			}
			var matched bool
			for _, svc := range Services {
				if matchesAll(job, svc) && len(job) > 0 {
					if sets[svc] == nil {
						sets[svc] = map[string]bool{}
					}
					sets[svc][name] = true
					matched = true
				}
			}
			if !matched {
				errs = append(errs, fmt.Errorf("%s: %s selects no service by its job label and is not an external metric", e.Where, name))
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	perService = map[string][]string{}
	for svc, set := range sets {
		perService[svc] = slices.Sorted(maps.Keys(set))
	}
	return perService, slices.Sorted(maps.Keys(ext)), nil
}

func matchesAll(ms []*labels.Matcher, v string) bool {
	for _, m := range ms {
		if !m.Matches(v) {
			return false
		}
	}
	return true
}

// MetricsList is the checked-in list of names: a comment line saying where
// it comes from, then one name per line.
func MetricsList(header string, names []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", header)
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// PrometheusRule wraps the rule file's groups in a monitoring.coreos.com/v1
// PrometheusRule named name, unchanged: the file's top-level comment is
// dropped and the rest is indented under spec, so the two cannot say
// different things.
func PrometheusRule(name string, rules []byte) ([]byte, error) {
	lines := strings.Split(strings.TrimRight(string(rules), "\n"), "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "#") || strings.TrimSpace(lines[0]) == "") {
		lines = lines[1:]
	}
	if len(lines) == 0 || lines[0] != "groups:" {
		return nil, errors.New("prometheus rule: the rule file must start with groups: after its comment")
	}
	var b bytes.Buffer
	b.WriteString("# Generated from deploy/monitoring/rules.yaml by `make monitoring-generate`; do not edit.\n")
	b.WriteString("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: " + name + "\nspec:\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("  " + l + "\n")
	}
	return b.Bytes(), nil
}
