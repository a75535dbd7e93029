package main

import (
	"strings"
	"testing"
	"time"
)

// TestSpread: each extreme over the median, odd and even counts alike.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		rates  []float64
		lo, hi float64
	}{
		{[]float64{100, 50, 150}, 0.5, 1.5},
		{[]float64{200, 90, 110, 80}, 0.8, 2},
		{[]float64{7}, 1, 1},
		{nil, 0, 0},
		{[]float64{0, 0}, 0, 0},
	} {
		if lo, hi := spread(c.rates); lo != c.lo || hi != c.hi {
			t.Errorf("%v: %v–%v, want %v–%v", c.rates, lo, hi, c.lo, c.hi)
		}
	}
}

// TestMeasureSteadiness: both probes run every window and their extremes
// bracket the median.
func TestMeasureSteadiness(t *testing.T) {
	s := measureSteadiness(4, 10*time.Millisecond)
	if s.Windows != 4 || s.WindowMS != 10 {
		t.Errorf("%+v", s)
	}
	for _, p := range [][2]float64{{s.Min, s.Max}, {s.LoopbackMin, s.LoopbackMax}} {
		if p[0] <= 0 || p[0] > 1 || p[1] < 1 {
			t.Errorf("%+v", s)
		}
	}
}

// TestSteadinessNote: a run that measured the probes says so in its
// machine sentence; a run from before the loopback probe renders the loop
// alone, and one from before both renders as before.
func TestSteadinessNote(t *testing.T) {
	if got := steadinessNote(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
	old := steadinessNote(&Steadiness{Windows: 12, WindowMS: 250, Min: 0.974, Max: 1.021})
	if !strings.HasPrefix(old, "; idle, in 12 windows of 250 ms, a fixed CPU loop ran at 0.97–1.02× its median speed") || strings.Contains(old, "loopback") {
		t.Errorf("%q", old)
	}
	md := renderMarkdown(Results{Machine: Machine{Cores: 2, Steadiness: &Steadiness{Windows: 12, WindowMS: 250, Min: 0.5, Max: 1.5, LoopbackMin: 0.87, LoopbackMax: 1.07}}}, t.TempDir())
	if !strings.Contains(md, "0.50–1.50× its median speed and one-byte loopback TCP round trips at 0.87–1.07× their median rate") {
		t.Error("the machine sentence leaves the probes' spread out")
	}
}
