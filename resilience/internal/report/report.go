// Package report collects the figures and pass/fail checks of a fault-suite
// run and renders them as RELIABILITY.md.
package report

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Check is one expectation and whether it held.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Scenario is one fault scenario or security check with its figures.
type Scenario struct {
	Name string
	// Sent and Failed count requests; Failed is what the expectation calls
	// a failure (not every non-200 is one: a 503 while the database is
	// down is the documented answer).
	Sent, Failed int
	Recovery     string
	Outcomes     string
	Checks       []Check
	Notes        []string
}

// Check records an expectation.
func (s *Scenario) Check(name string, ok bool, format string, args ...any) {
	s.Checks = append(s.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// Note records a remark shown under the scenario.
func (s *Scenario) Note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// OK reports whether every check held.
func (s *Scenario) OK() bool {
	for _, c := range s.Checks {
		if !c.OK {
			return false
		}
	}
	return len(s.Checks) > 0
}

// HostileClass counts one class of hostile input.
type HostileClass struct {
	Name string
	// Tried inputs, answers with a 5xx, answers outside the documented
	// statuses (including no answer), and a few examples of those.
	Tried, FiveXX, Unexpected int
	Failures                  []string
}

// Report is a whole run.
type Report struct {
	mu      sync.Mutex
	Started time.Time
	Elapsed time.Duration
	Setup   []string
	// Index is markdown shown before the scenarios: what each scenario or
	// test keeps fixed.
	Index     string
	Scenarios []*Scenario
	Hostile   map[string]*HostileClass
	Security  []*Scenario
	Static    string
	Errors    []string
}

// New starts a report.
func New() *Report {
	return &Report{Started: time.Now().UTC(), Hostile: map[string]*HostileClass{}}
}

// Scenario adds a scenario.
func (r *Report) Scenario(name string) *Scenario { return r.add(&r.Scenarios, name) }

// SecurityCheck adds a security check.
func (r *Report) SecurityCheck(name string) *Scenario { return r.add(&r.Security, name) }

// add appends a new scenario to list; scenarios run concurrently.
func (r *Report) add(list *[]*Scenario, name string) *Scenario {
	s := &Scenario{Name: name}
	r.mu.Lock()
	*list = append(*list, s)
	r.mu.Unlock()
	return s
}

// HostileResult counts one hostile input of class; failure is empty when
// the answer was as documented.
func (r *Report) HostileResult(class string, status int, failure string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.Hostile[class]
	if c == nil {
		c = &HostileClass{Name: class}
		r.Hostile[class] = c
	}
	c.Tried++
	if status >= 500 {
		c.FiveXX++
	}
	if failure != "" {
		c.Unexpected++
		if len(c.Failures) < 8 {
			c.Failures = append(c.Failures, failure)
		}
	}
}

// Error records a problem that stopped part of the run.
func (r *Report) Error(format string, args ...any) {
	r.mu.Lock()
	r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// OK reports whether everything held.
func (r *Report) OK() bool {
	if len(r.Errors) > 0 {
		return false
	}
	for _, s := range slices.Concat(r.Scenarios, r.Security) {
		if !s.OK() {
			return false
		}
	}
	for _, c := range r.Hostile {
		if c.FiveXX > 0 || c.Unexpected > 0 {
			return false
		}
	}
	return true
}

// Failures lists every failed check, for the console.
func (r *Report) Failures() []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, Redact(e))
	}
	for _, s := range slices.Concat(r.Scenarios, r.Security) {
		for _, c := range s.Checks {
			if !c.OK {
				out = append(out, Redact(fmt.Sprintf("%s: %s: %s", s.Name, c.Name, c.Detail)))
			}
		}
	}
	for _, c := range r.sortedHostile() {
		for _, f := range c.Failures {
			out = append(out, Redact(fmt.Sprintf("hostile %s: %s", c.Name, f)))
		}
	}
	return out
}

func (r *Report) sortedHostile() []*HostileClass {
	out := make([]*HostileClass, 0, len(r.Hostile))
	for _, c := range r.Hostile {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func mark(ok bool) string {
	if ok {
		return "pass"
	}
	return "**FAIL**"
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// secretPattern matches API keys and access_key values, which error
// messages may quote; the report never shows them.
var secretPattern = regexp.MustCompile(`(access_key=)[^&\s"]+|\b(td[nm]_)[A-Za-z0-9]{8,}`)

// Redact hides keys in s.
func Redact(s string) string {
	return secretPattern.ReplaceAllString(s, "${1}${2}REDACTED")
}

// Markdown renders RELIABILITY.md.
func (r *Report) Markdown() string {
	return Redact(r.markdown())
}

func (r *Report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Reliability and abuse report\n\n")
	w("Generated by `make faults` (scripts/faults.sh, resilience/cmd/faults). Do not edit by hand: run `make faults` again.\n\n")
	w("Run: %s, %s, overall: %s.\n\n", r.Started.Format(time.RFC3339), r.Elapsed.Round(time.Second), mark(r.OK()))
	w("Every load is bounded: a fixed rate for a fixed time on loopback against the real binaries (child processes of the runner), ")
	w("with the suite's own PostgreSQL and Redis, which it stops and starts. A request counts as *failed* when it breaks the scenario's expectation; ")
	w("documented error answers during an outage (503 with the service's error body, within the configured timeout) are counted under outcomes, not as failures.\n\n")
	for _, s := range r.Setup {
		w("- %s\n", s)
	}
	if len(r.Setup) > 0 {
		w("\n")
	}
	if r.Index != "" {
		w("%s\n", r.Index)
	}
	if len(r.Errors) > 0 {
		w("## Errors\n\n")
		for _, e := range r.Errors {
			w("- %s\n", e)
		}
		w("\n")
	}
	writeScenarios(&b, "Fault scenarios", "| scenario | result | requests sent | failed | recovery time | outcomes |\n|---|---|---:|---:|---|---|", r.Scenarios,
		func(s *Scenario) string {
			rec := s.Recovery
			if rec == "" {
				rec = "n/a"
			}
			return fmt.Sprintf("| %s | %s | %d | %d | %s | %s |", cell(s.Name), mark(s.OK()), s.Sent, s.Failed, cell(rec), cell(s.Outcomes))
		})
	w("## Hostile input\n\n")
	w("Every input must get a documented 4xx (or the normal answer where the input is harmless), never a 5xx, and stored data must stay byte-exact.\n\n")
	w("| class | tried | 5xx | other unexpected |\n|---|---:|---:|---:|\n")
	tried, fivexx := 0, 0
	for _, c := range r.sortedHostile() {
		w("| %s | %d | %d | %d |\n", cell(c.Name), c.Tried, c.FiveXX, c.Unexpected)
		tried += c.Tried
		fivexx += c.FiveXX
	}
	w("| **total** | %d | %d | |\n\n", tried, fivexx)
	for _, c := range r.sortedHostile() {
		if len(c.Failures) == 0 {
			continue
		}
		w("Unexpected answers in *%s*:\n\n", c.Name)
		for _, f := range c.Failures {
			w("- %s\n", f)
		}
		w("\n")
	}
	writeScenarios(&b, "Security checks", "| check | result | requests | failed |\n|---|---|---:|---:|", r.Security,
		func(s *Scenario) string {
			return fmt.Sprintf("| %s | %s | %d | %d |", cell(s.Name), mark(s.OK()), s.Sent, s.Failed)
		})
	if r.Static != "" {
		w("## Static checks\n\n%s\n", r.Static)
	}
	return b.String()
}

// writeScenarios writes a section of scenarios: a table under columns
// with one row each, then each scenario's checks.
func writeScenarios(b *strings.Builder, title, columns string, ss []*Scenario, row func(*Scenario) string) {
	fmt.Fprintf(b, "## %s\n\n%s\n", title, columns)
	for _, s := range ss {
		fmt.Fprintf(b, "%s\n", row(s))
	}
	b.WriteString("\n")
	for _, s := range ss {
		writeChecks(b, s)
	}
}

func writeChecks(b *strings.Builder, s *Scenario) {
	fmt.Fprintf(b, "### %s\n\n", s.Name)
	for _, c := range s.Checks {
		fmt.Fprintf(b, "- %s — %s: %s\n", mark(c.OK), c.Name, c.Detail)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(b, "- note: %s\n", n)
	}
	b.WriteString("\n")
}

// ForeignSections are the headings of RELIABILITY.md's sections that other
// targets measure and write (`make compose-smoke` runs the gateway stack,
// which the fault suite does not start; marketdata-svc's replica suites
// measure the read replicas and its failover test the Redis Cluster); a
// rewrite keeps them, so they stay last.
var ForeignSections = []string{"## Gateway (make compose-smoke)", "## PostgreSQL read replicas", "## Redis Cluster"}

// KeepForeign returns the part of an earlier RELIABILITY.md that starts at
// the first of ForeignSections, or "" when it holds none, for the new
// report to end with.
func KeepForeign(old string) string {
	at := -1
	for _, h := range ForeignSections {
		if i := strings.Index(old, "\n"+h+"\n"); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	return old[at:]
}
