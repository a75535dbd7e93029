package main

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"time"
)

// Steadiness is how evenly the idle machine ran two fixed probes right
// before the workloads, in alternating windows: a CPU loop alone on one
// goroutine (Min, Max), and one-byte round trips over a loopback TCP
// connection (LoopbackMin, LoopbackMax), each window's rate over the
// median window's. The loop sees a host that takes its cores' speed away
// (which a virtual machine need not see as steal time); the round trips
// see what the HTTP workloads spend most of their time on besides: system
// calls, the loopback network and goroutine wake-ups. A spread of rounds
// as wide as the round trips' is the machine's, not the code's.
type Steadiness struct {
	Windows  int     `json:"windows"`
	WindowMS int64   `json:"window_ms"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	// The loopback figures are absent from runs before they were
	// measured, and when the loopback could not be opened.
	LoopbackMin float64 `json:"loopback_min,omitempty"`
	LoopbackMax float64 `json:"loopback_max,omitempty"`
}

// steadinessChunk is the loop's unit of work between clock reads: about
// 30 µs on the machines this ran on, small against a window.
const steadinessChunk = 1 << 14

// measureSteadiness runs windows windows of w of each probe, in turns.
func measureSteadiness(windows int, w time.Duration) Steadiness {
	cpu := make([]float64, windows)
	var trips []float64
	rt, closeRT := newRoundTripper()
	defer closeRT()
	x := uint64(88172645463325252)
	for i := range cpu {
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
		cpu[i] = float64(chunks) / time.Since(start).Seconds()
		if rt != nil {
			if n, ok := rt(w); ok {
				trips = append(trips, n)
			} else {
				rt, trips = nil, nil
			}
		}
	}
	// A use of x, so that the loop is not optimised away.
	runtime.KeepAlive(x)
	s := Steadiness{Windows: windows, WindowMS: w.Milliseconds()}
	s.Min, s.Max = spread(cpu)
	if len(trips) == windows {
		s.LoopbackMin, s.LoopbackMax = spread(trips)
	}
	return s
}

// newRoundTripper opens a loopback TCP connection to an echo of its own
// and returns a probe that makes one-byte round trips over it for a
// window and reports their rate; nil when the loopback cannot be opened.
func newRoundTripper() (func(time.Duration) (float64, bool), func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, func() {}
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return nil, func() {}
	}
	b := make([]byte, 1)
	probe := func(w time.Duration) (float64, bool) {
		n := 0
		start := time.Now()
		for time.Since(start) < w {
			if _, err := c.Write(b); err != nil {
				return 0, false
			}
			if _, err := io.ReadFull(c, b); err != nil {
				return 0, false
			}
			n++
		}
		return float64(n) / time.Since(start).Seconds(), true
	}
	return probe, func() { _ = c.Close(); _ = ln.Close() }
}

// spread is the least and the greatest of rates over their median; zeros
// for none.
func spread(rates []float64) (lo, hi float64) {
	if len(rates) == 0 {
		return 0, 0
	}
	sorted := slices.Sorted(slices.Values(rates))
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + median) / 2
	}
	if median <= 0 {
		return 0, 0
	}
	return sorted[0] / median, sorted[len(sorted)-1] / median
}

// steadinessNote is s for a report's sentence on the machine, led by a
// semicolon; empty for a run that did not measure it.
func steadinessNote(s *Steadiness) string {
	if s == nil || s.Windows == 0 {
		return ""
	}
	note := fmt.Sprintf("; idle, in %d windows of %d ms, a fixed CPU loop ran at %.2f–%.2f× its median speed", s.Windows, s.WindowMS, s.Min, s.Max)
	if s.LoopbackMax > 0 {
		note += fmt.Sprintf(" and one-byte loopback TCP round trips at %.2f–%.2f× their median rate", s.LoopbackMin, s.LoopbackMax)
	}
	return note
}
