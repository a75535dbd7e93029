package main

import (
	"strings"
	"testing"
	"time"
)

// TestSteadinessOf: the spread is each extreme over the median, odd and
// even counts alike.
func TestSteadinessOf(t *testing.T) {
	for _, c := range []struct {
		rates    []float64
		min, max float64
	}{
		{[]float64{100, 50, 150}, 0.5, 1.5},
		{[]float64{200, 90, 110, 80}, 0.8, 2},
		{[]float64{7}, 1, 1},
		{nil, 0, 0},
	} {
		s := steadinessOf(c.rates, 250*time.Millisecond)
		if s.Min != c.min || s.Max != c.max || s.Windows != len(c.rates) || s.WindowMS != 250 {
			t.Errorf("%v: %+v, want min %v max %v", c.rates, s, c.min, c.max)
		}
	}
}

// TestMeasureSteadiness: the loop runs every window and its extremes
// bracket the median.
func TestMeasureSteadiness(t *testing.T) {
	s := measureSteadiness(4, 10*time.Millisecond)
	if s.Windows != 4 || s.WindowMS != 10 || s.Min <= 0 || s.Min > 1 || s.Max < 1 {
		t.Errorf("%+v", s)
	}
}

// TestSteadinessNote: a run that measured the loop says so in its machine
// sentence; an older run's results render as before.
func TestSteadinessNote(t *testing.T) {
	if got := steadinessNote(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
	got := steadinessNote(&Steadiness{Windows: 12, WindowMS: 250, Min: 0.624, Max: 1.181})
	if !strings.Contains(got, "0.62–1.18× its median speed in 12 windows of 250 ms") || !strings.HasPrefix(got, "; ") {
		t.Errorf("%q", got)
	}
	md := renderMarkdown(Results{Machine: Machine{Cores: 2, Steadiness: &Steadiness{Windows: 12, WindowMS: 250, Min: 0.5, Max: 1.5}}}, t.TempDir())
	if !strings.Contains(md, "0.50–1.50× its median speed") {
		t.Error("the machine sentence leaves the loop's spread out")
	}
}
