package loadgen

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseWrk(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:1/
  2 threads and 16 connections
BENCHJSON {"duration_us":10000000,"requests":50000,"bytes":1000,"errors_connect":0,"errors_read":1,"errors_write":0,"errors_status":3,"errors_timeout":2,"latency_mean_us":310.5,"latency_max_us":9000,"p50_us":250,"p90_us":500,"p99_us":1200,"p999_us":3000}
Requests/sec:   5000.00
`
	m, err := ParseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.RPS != 5000 || m.Requests != 50000 || m.P50Ms != 0.25 || m.P99Ms != 1.2 || m.Errors != 6 {
		t.Fatalf("got %+v", m)
	}
	if _, err := ParseWrk("Requests/sec: 1\n"); err == nil {
		t.Fatal("want an error without a summary line")
	}
}

func TestParsePgbench(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "pgb")
	logs := map[string]string{
		"pgb.100":   "0 0 100 0 1700000000 1\n0 1 300 0 1700000000 2\n",
		"pgb.100.1": "1 0 200 0 1700000000 3\n1 1 failed 0 1700000000 4\n",
	}
	for name, body := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := `transaction type: multiple scripts
duration: 10 s
number of transactions actually processed: 3
number of failed transactions: 0 (0.000%)
tps = 1234.5 (without initial connection time)
`
	m, err := ParsePgbench(out, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if m.RPS != 1234.5 || m.Requests != 3 || m.P50Ms != 0.2 || m.P99Ms != 0.3 || m.MaxMs != 0.3 || m.Errors != 1 {
		t.Fatalf("got %+v", m)
	}
}

func TestParsePgbenchZeroLatencies(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "pgb")
	// Client 0 completes every 300 µs, but pgbench logged most latencies
	// as 0: the intervals between completions stand in.
	body := "0 0 280 0 1700000000 1000\n0 1 0 0 1700000000 1300\n0 2 0 0 1700000000 1600\n0 3 0 0 1700000000 1900\n"
	if err := os.WriteFile(prefix+".1", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := "duration: 1 s\nnumber of transactions actually processed: 4\ntps = 4.0 (without initial connection time)\n"
	m, err := ParsePgbench(out, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if m.P50Ms != 0.3 || m.P99Ms != 0.3 || m.LatencyNote == "" {
		t.Fatalf("got %+v", m)
	}
}

func TestPercentile(t *testing.T) {
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(i + 1)
	}
	if got := Percentile(v, 50); got != 50 {
		t.Fatalf("p50 = %d", got)
	}
	if got := Percentile(v, 99); got != 99 {
		t.Fatalf("p99 = %d", got)
	}
	if got := Percentile(v[:1], 99); got != 1 {
		t.Fatalf("p99 of one = %d", got)
	}
}

// grid is a wrk latency grid whose percentile i/10 is f(i).
func grid(f func(i int) int64) []int64 {
	g := make([]int64, gridSteps)
	for i := range g {
		g[i] = f(i + 1)
	}
	return g
}

func TestParseWrkGrid(t *testing.T) {
	q := make([]string, gridSteps)
	for i := range q {
		q[i] = strconv.Itoa(i + 1)
	}
	m, err := ParseWrk(`BENCHJSON {"duration_us":1000000,"requests":10,"p50_us":500,"q":[` + strings.Join(q, ",") + `]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Grid) != gridSteps || m.Grid[0] != 1 || m.Grid[gridSteps-1] != gridSteps {
		t.Fatalf("grid of %d points, first %v", len(m.Grid), m.Grid[:1])
	}
}

// TestMerge pools runs by their requests: three quarters of the requests
// answered in 100 µs and a quarter in 1 ms put the median at 100 µs and
// the 90th percentile at 1 ms, which neither run's own percentiles nor
// their average would give.
func TestMerge(t *testing.T) {
	fast := Measurement{Tool: "wrk", Requests: 3000, Seconds: 2, MeanMs: 0.1, MaxMs: 0.2, Grid: grid(func(int) int64 { return 100 })}
	slow := Measurement{Tool: "wrk", Requests: 1000, Seconds: 2, MeanMs: 1, MaxMs: 3, Errors: 2, ErrorsNote: "status>=400: 2",
		Grid: grid(func(int) int64 { return 1000 })}
	m, err := Merge([]Measurement{fast, slow})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 4000 || m.Seconds != 4 || m.RPS != 1000 || m.Errors != 2 || m.MaxMs != 3 {
		t.Errorf("totals: %+v", m)
	}
	if math.Abs(m.MeanMs-0.325) > 1e-9 {
		t.Errorf("mean %.4f ms, want 0.325 (weighted by requests)", m.MeanMs)
	}
	if m.P50Ms != 0.1 || m.P90Ms != 1 || m.P99Ms != 1 {
		t.Errorf("p50/p90/p99 = %v/%v/%v ms, want 0.1/1/1", m.P50Ms, m.P90Ms, m.P99Ms)
	}
	if !strings.Contains(m.ErrorsNote, "run 2: status>=400: 2") || m.LatencyNote == "" {
		t.Errorf("notes: %q, %q", m.ErrorsNote, m.LatencyNote)
	}

	// Two runs of one distribution merge into that distribution.
	linear := Measurement{Tool: "wrk", Requests: 500, Seconds: 1, Grid: grid(func(i int) int64 { return int64(i) })}
	m, err = Merge([]Measurement{linear, linear})
	if err != nil {
		t.Fatal(err)
	}
	if m.P50Ms != 0.5 || m.P90Ms != 0.9 || m.P99Ms != 0.99 {
		t.Errorf("identical runs: p50/p90/p99 = %v/%v/%v ms, want 0.5/0.9/0.99", m.P50Ms, m.P90Ms, m.P99Ms)
	}

	if _, err := Merge([]Measurement{fast, {Tool: "wrk", Requests: 1, Seconds: 1}}); err == nil {
		t.Error("a run without its latency grid was merged: its percentiles would be lost")
	}
	if one, err := Merge([]Measurement{slow}); err != nil || one.P50Ms != slow.P50Ms || one.LatencyNote != "" {
		t.Errorf("one run: %+v, %v; want it as it is", one, err)
	}
}
