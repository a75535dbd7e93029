package loadgen

import (
	"os"
	"path/filepath"
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
