package main

import (
	"strings"
	"testing"
)

// A subset run replaces only what it measured, and the report names it:
// a figure from the full run is never shown as the rerun's, nor the reverse.
func TestMergeRerunReplacesOnlyWhatItMeasured(t *testing.T) {
	full := Results{GitRevision: "full1", GeneratedAt: "2026-01-01T00:00:00Z",
		Workloads: []WorkloadResult{
			{ID: "eod_hit", Title: "eod", Ratio: 0.8, Ceiling: &Side{}},
			{ID: "notes_get", Title: "get", Ratio: 0.7, Target: 0.85, Ceiling: &Side{}},
		},
		TenantScale: &TenantScale{TagP50Ratio: 1.1},
		Import:      &ImportResult{Ratio: 0.9},
	}
	sub := Results{GitRevision: "sub2", GeneratedAt: "2026-01-02T00:00:00Z",
		Workloads:   []WorkloadResult{{ID: "notes_get", Title: "get", Ratio: 0.88, Target: 0.85, Ceiling: &Side{}}},
		TenantScale: &TenantScale{TagP50Ratio: 1.05},
	}
	got := mergeRerun(full, sub)

	if got.GitRevision != "full1" {
		t.Errorf("top-level revision = %q, want the full run's", got.GitRevision)
	}
	if len(got.Workloads) != 2 || got.Workloads[0].Ratio != 0.8 || got.Workloads[0].Rerun != "" {
		t.Errorf("eod_hit changed: %+v", got.Workloads[0])
	}
	if w := got.Workloads[1]; w.Ratio != 0.88 || w.Rerun != "sub2" {
		t.Errorf("notes_get = %+v, want the rerun's figure marked sub2", w)
	}
	if got.TenantScale.TagP50Ratio != 1.05 || got.Import.Ratio != 0.9 {
		t.Errorf("sections: tenant %v import %v, want tenant replaced, import kept", got.TenantScale.TagP50Ratio, got.Import.Ratio)
	}
	if full.Workloads[1].Ratio != 0.7 {
		t.Error("the full run's results were modified in place")
	}
	if len(got.Reruns) != 1 || strings.Join(got.Reruns[0].Workloads, ",") != "notes_get,tenant_scale" {
		t.Errorf("reruns = %+v", got.Reruns)
	}

	md := renderMarkdown(got, "")
	for _, want := range []string{"get (measured again at `sub2`)", "BENCH_WORKLOADS=notes_get,tenant_scale", "≥ 0.85×"} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	if strings.Contains(md, "eod (measured again") {
		t.Error("a full-run row is marked as measured again")
	}
}

// A webhook_delivery subset run replaces the webhooks section, keeps the
// full run's, is named among the reruns, and shows in the Results table.
func TestMergeRerunWebhooks(t *testing.T) {
	full := Results{GitRevision: "full1", Import: &ImportResult{Ratio: 0.9}}
	sub := Results{GitRevision: "sub2", Webhooks: &WebhookResult{Events: 20000, DeliveriesPerSec: 950, RateTarget: 1000,
		RateStatus: noiseStatus(950.0 / 1000), LagP99Ms: 420, LagTargetMs: 1000, LagStatus: noiseStatus(1000.0 / 420)}}
	got := mergeRerun(full, sub)
	if got.Webhooks == nil || got.Webhooks.DeliveriesPerSec != 950 || got.Import == nil {
		t.Fatalf("merged = %+v", got)
	}
	if len(got.Reruns) != 1 || strings.Join(got.Reruns[0].Workloads, ",") != "webhook_delivery" {
		t.Errorf("reruns = %+v", got.Reruns)
	}
	md := renderMarkdown(got, "")
	for _, want := range []string{"| 950 deliveries/s |", "≥ 1000/s | within noise |", "| 420.00 |", "p99 < 1000 ms | **pass** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	if s := noiseStatus(0.5); s != "miss" {
		t.Errorf("noiseStatus(0.5) = %q, want miss", s)
	}
}

// Rounds that straddle a target are within noise, never a pass; a bound
// broken in any round is a miss whatever the ratio.
func TestSyncStatusGradesEveryRound(t *testing.T) {
	rounds := func(ratios ...float64) []ImportResult {
		var out []ImportResult
		for _, r := range ratios {
			out = append(out, ImportResult{Ratio: r, ImportSeconds: 1, ImportMaxRSSMB: 50})
		}
		return out
	}
	for _, tc := range []struct {
		rounds []ImportResult
		target float64
		want   string
	}{
		{rounds(0.55, 0.6, 0.7), 0.5, "pass"},
		{rounds(0.4, 0.55, 0.7), 0.5, "within noise"},
		{rounds(0.3, 0.45, 0.7), 0.5, "miss"},
		{rounds(0.1, 0.2, 0.3), 0, "report"},
		{append(rounds(0.6, 0.7), ImportResult{Ratio: 0.8, ImportSeconds: 61, ImportMaxRSSMB: 50}), 0.5, "miss"},
		{append(rounds(0.6, 0.7), ImportResult{Ratio: 0.8, ImportSeconds: 1, ImportMaxRSSMB: 250}), 0, "miss"},
	} {
		if got := syncStatus(tc.rounds, 60, tc.target); got != tc.want {
			t.Errorf("rounds %+v target %v: %s, want %s", tc.rounds, tc.target, got, tc.want)
		}
	}
}

// A ratio workload's rounds are graded as the sync's are: rounds on both
// sides of the target are within noise even when the median clears it,
// and a bound is held the same way from above.
func TestRoundsAreGradedEachOne(t *testing.T) {
	for _, tc := range []struct {
		ratios []float64
		target float64
		want   string
	}{
		{[]float64{0.9, 0.88, 0.86}, 0.85, "pass"},
		{[]float64{0.9, 0.88, 0.80, 0.91, 0.81}, 0.85, "within noise"},
		{[]float64{0.9, 0.80, 0.81}, 0.85, "miss"},
	} {
		rounds := make([]Round, len(tc.ratios))
		for i, r := range tc.ratios {
			rounds[i] = Round{ServiceRPS: r * 1000, CeilingRPS: 1000, Ratio: r}
		}
		w := WorkloadResult{ID: "notes_get", Target: tc.target, Rounds: rounds}
		w.grade()
		if w.Status != tc.want {
			t.Errorf("rounds %v target %v: %s, want %s", tc.ratios, tc.target, w.Status, tc.want)
		}
	}
	for _, tc := range []struct {
		ratios []float64
		want   string
	}{
		{[]float64{1.0, 1.1, 1.2}, "pass"},
		{[]float64{1.0, 1.1, 1.3}, "within noise"},
		{[]float64{1.0, 1.3, 1.4}, "miss"},
	} {
		if got := boundStatus(tc.ratios, 1.25); got != tc.want {
			t.Errorf("bound 1.25, rounds %v: %s, want %s", tc.ratios, got, tc.want)
		}
	}
	if got := worstStatus("pass", "within noise"); got != "within noise" {
		t.Errorf("worst of pass and within noise: %s", got)
	}
}

// The rounds' list says how each workload's rounds were sliced: slices
// recorded with their length show it, older ones (2 s, length not
// recorded) and unsliced rounds say what they were.
func TestRoundsNameTheirSlices(t *testing.T) {
	round := []Round{{ServiceRPS: 90, CeilingRPS: 100, Ratio: 0.9}}
	r := Results{GitRevision: "r1", Workloads: []WorkloadResult{
		{ID: "notes_get", Target: 0.85, Ceiling: &Side{}, Rounds: round, Slices: 30, SliceSeconds: 1},
		{ID: "eod_hit", Target: 0.8, Ceiling: &Side{}, Rounds: round, Slices: 5},
		{ID: "notes_post", Target: 0.8, Ceiling: &Side{}, Rounds: round},
	}}
	md := renderMarkdown(r, "")
	for _, want := range []string{
		"- notes_get (30 interleaved slices of 1 s a side): ",
		"- eod_hit (5 interleaved slices a side): ",
		"- notes_post (back to back): ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
}
