package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Steadiness is how evenly the machine ran a fixed CPU loop, alone on one
// goroutine, right before the workloads: each window's rate of the loop
// over the median window's. On a virtual machine whose host is shared the
// speed of a core moves with the neighbours' load, without any of it
// showing as steal time; every ratio measured on it moves as much, so a
// verdict of "within noise" is read against this spread.
type Steadiness struct {
	Windows  int     `json:"windows"`
	WindowMS int64   `json:"window_ms"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
}

// steadinessChunk is the loop's unit of work between clock reads: about
// 20 µs on the machines this ran on, small against a window.
const steadinessChunk = 1 << 14

// measureSteadiness runs the loop for windows windows of w each.
func measureSteadiness(windows int, w time.Duration) Steadiness {
	rates := make([]float64, windows)
	x := uint64(88172645463325252)
	for i := range rates {
		chunks := 0
		start := time.Now()
		for time.Since(start) < w {
			for range steadinessChunk {
				// xorshift64: work the compiler cannot fold away.
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
			chunks++
		}
		rates[i] = float64(chunks) / time.Since(start).Seconds()
	}
	// A use of x, so that the loop is not optimised away.
	runtime.KeepAlive(x)
	return steadinessOf(rates, w)
}

// steadinessOf summarises the windows' rates against their median.
func steadinessOf(rates []float64, w time.Duration) Steadiness {
	s := Steadiness{Windows: len(rates), WindowMS: w.Milliseconds()}
	if len(rates) == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(rates))
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + median) / 2
	}
	if median > 0 {
		s.Min, s.Max = sorted[0]/median, sorted[len(sorted)-1]/median
	}
	return s
}

// steadinessNote is s for a report's sentence on the machine, led by a
// semicolon; empty for a run that did not measure it.
func steadinessNote(s *Steadiness) string {
	if s == nil || s.Windows == 0 {
		return ""
	}
	return fmt.Sprintf("; a fixed CPU loop alone on the idle machine ran at %.2f–%.2f× its median speed in %d windows of %d ms (a steady machine stays within a few percent; every ratio here moves with it)",
		s.Min, s.Max, s.Windows, s.WindowMS)
}
