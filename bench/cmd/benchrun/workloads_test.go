package main

import (
	"math"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/bench/internal/loadgen"
)

// TestSliceOrder: within a round the pairs alternate (service, ceiling,
// ceiling, service, ...), and consecutive rounds open with different
// sides, so each side runs first as often as the other.
func TestSliceOrder(t *testing.T) {
	var got []string
	first := [2]int{}
	for i := range 4 {
		var round []string
		for k := range 3 {
			o := sliceOrder(i, k)
			if o[0] == o[1] {
				t.Fatalf("round %d slice %d: order %v measures one side twice", i, k, o)
			}
			first[o[0]]++
			round = append(round, string("SC"[o[0]])+string("SC"[o[1]]))
		}
		got = append(got, strings.Join(round, " "))
	}
	want := []string{"SC CS SC", "CS SC CS", "SC CS SC", "CS SC CS"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("orders %q, want %q", got, want)
	}
	if first[0] != first[1] {
		t.Errorf("service first %d times, ceiling first %d", first[0], first[1])
	}
}

// TestJoinSlices: a side measured in slices is its load merged, its cores
// averaged over the slices' time, its counters added and its largest
// resident set kept.
func TestJoinSlices(t *testing.T) {
	g := func(us int64) []int64 {
		out := make([]int64, 999)
		for i := range out {
			out[i] = us
		}
		return out
	}
	parts := []Side{
		{Measurement: loadgen.Measurement{Tool: "wrk", Requests: 3000, Seconds: 3, Grid: g(100)}, What: "notes-svc",
			ProcessCores: 1, MachineBusyCores: 2, CPU: map[string]float64{"notes-svc": 1, "postgres": 0.5}, MaxRSSMB: 40,
			Metrics: map[string]float64{"db_sessions_opened": 1}, Command: "wrk -d 2s"},
		{Measurement: loadgen.Measurement{Tool: "wrk", Requests: 1000, Seconds: 1, Grid: g(300)}, What: "notes-svc",
			ProcessCores: 0.6, MachineBusyCores: 1, CPU: map[string]float64{"notes-svc": 0.6}, MaxRSSMB: 55,
			Metrics: map[string]float64{"db_sessions_opened": 2}, Command: "wrk -d 2s"},
	}
	s, err := joinSlices(parts)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if s.RPS != 1000 || s.Requests != 4000 || s.P50Ms != 0.1 || s.What != "notes-svc" {
		t.Errorf("load: %+v", s.Measurement)
	}
	if !near(s.ProcessCores, 0.9) || !near(s.MachineBusyCores, 1.75) || !near(s.CPU["notes-svc"], 0.9) || !near(s.CPU["postgres"], 0.375) {
		t.Errorf("cores: process %v, machine %v, parts %v; want 0.9, 1.75, notes-svc 0.9, postgres 0.375", s.ProcessCores, s.MachineBusyCores, s.CPU)
	}
	if s.MaxRSSMB != 55 || s.Metrics["db_sessions_opened"] != 3 || !strings.Contains(s.Command, "2 slices") {
		t.Errorf("rss %v, counters %v, command %q", s.MaxRSSMB, s.Metrics, s.Command)
	}
	if one, err := joinSlices(parts[:1]); err != nil || one.Command != "wrk -d 2s" {
		t.Errorf("one slice: %+v, %v; want it as it is", one, err)
	}
}
