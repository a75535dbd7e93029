package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Steadiness is how evenly the machine ran a fixed CPU loop, alone on one
// goroutine, right before the workloads: the slowest and the fastest
// window's rate of the loop over the median window's. It tells the two
// sources of a wide spread of rounds apart: a host that takes its cores'
// speed away (which a virtual machine need not see as steal time) moves
// this figure too, while the load's own variation (scheduling on shared
// cores, the database's background work) leaves it near 1.
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
	return fmt.Sprintf("; a fixed CPU loop alone on the idle machine ran at %.2f–%.2f× its median speed in %d windows of %d ms, near 1 when the host gives the cores their full speed",
		s.Min, s.Max, s.Windows, s.WindowMS)
}
