package report

import (
	"strings"
	"testing"
)

// sample is a run with one of everything the report renders.
func sample() *Report {
	r := New()
	r.Setup = []string{"stack on loopback"}
	r.Index = "## Index\n"
	f := r.Scenario("Redis outage")
	f.Sent, f.Failed, f.Outcomes = 100, 0, "503 x4"
	f.Check("no 5xx beyond 503", true, "%d requests", 100)
	f.Note("cache | bypassed")
	g := r.Scenario("Slow database")
	g.Sent, g.Failed, g.Recovery = 50, 2, "1.2 s"
	g.Check("deadline held", false, "2 over")
	sec := r.SecurityCheck("Tenant isolation")
	sec.Sent = 12
	sec.Check("every answer 404", true, "12 of 12 with key tdn_abcdefghijkl")
	r.HostileResult("json", 400, "")
	r.HostileResult("json", 500, "500 on {")
	r.Error("restart failed")
	r.Static = "gosec: 0 open."
	return r
}

func TestMarkdownRendersEverySection(t *testing.T) {
	md := sample().Markdown()
	for _, want := range []string{
		"## Errors\n\n- restart failed\n",
		"## Fault scenarios\n\n| scenario | result | requests sent | failed | recovery time | outcomes |\n|---|---|---:|---:|---|---|\n" +
			"| Redis outage | pass | 100 | 0 | n/a | 503 x4 |\n| Slow database | **FAIL** | 50 | 2 | 1.2 s |  |\n\n",
		"### Redis outage\n\n- pass — no 5xx beyond 503: 100 requests\n- note: cache | bypassed\n\n",
		"### Slow database\n\n- **FAIL** — deadline held: 2 over\n\n",
		"| json | 2 | 1 | 1 |\n| **total** | 2 | 1 | |\n",
		"## Security checks\n\n| check | result | requests | failed |\n|---|---|---:|---:|\n| Tenant isolation | pass | 12 | 0 |\n\n",
		"### Tenant isolation\n\n- pass — every answer 404: 12 of 12 with key tdn_REDACTED\n\n",
		"## Static checks\n\ngosec: 0 open.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks\n%s\nin\n%s", want, md)
		}
	}
}

func TestFailuresListEveryFailedCheck(t *testing.T) {
	r := sample()
	if r.OK() {
		t.Fatal("OK() with failed checks")
	}
	got := strings.Join(r.Failures(), "\n")
	want := "restart failed\nSlow database: deadline held: 2 over\nhostile json: 500 on {"
	if got != want {
		t.Errorf("Failures() =\n%s\nwant\n%s", got, want)
	}
}
