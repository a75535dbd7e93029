package feed

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Meter shows a run's progress: on a terminal, one line redrawn in place
// (symbols done of total, rows, rate, ETA); elsewhere a structured log
// line every Every. A nil *Meter shows nothing.
type Meter struct {
	// Terminal receives the redrawn line; nil logs to Log instead.
	Terminal io.Writer
	Log      *slog.Logger
	Every    time.Duration
	Provider string

	mu          sync.Mutex
	total, done int
	rows        int64
	start, last time.Time
}

// Start sets the number of units (symbols, or bulk days) to do.
func (m *Meter) Start(total int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total, m.start = total, time.Now()
}

// Add counts units done and rows stored.
func (m *Meter) Add(done int, rows int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += done
	m.rows += rows
	now := time.Now()
	every := m.Every
	if m.Terminal != nil {
		every = 200 * time.Millisecond
	}
	if now.Sub(m.last) < every && m.done < m.total {
		return
	}
	m.last = now
	m.show(now)
}

// Finish ends the terminal's line.
func (m *Meter) Finish() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Terminal != nil && !m.last.IsZero() {
		fmt.Fprintln(m.Terminal)
	}
}

func (m *Meter) show(now time.Time) {
	elapsed := now.Sub(m.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(m.rows) / s
	}
	eta := time.Duration(0)
	if m.done > 0 && m.done < m.total {
		eta = time.Duration(float64(elapsed) / float64(m.done) * float64(m.total-m.done)).Round(time.Second)
	}
	if m.Terminal != nil {
		width := 30
		filled := 0
		if m.total > 0 {
			filled = width * m.done / m.total
		}
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = '-'
			if i < filled {
				bar[i] = '#'
			}
		}
		fmt.Fprintf(m.Terminal, "\r%s [%s] %d/%d symbols  %d rows  %.0f rows/s  ETA %s ", m.Provider, bar, m.done, m.total, m.rows, rate, eta)
		return
	}
	if m.Log != nil {
		m.Log.Info("sync progress", "provider", m.Provider, "done", m.done, "total", m.total, "rows", m.rows,
			"rows_per_second", int64(rate), "eta", eta.String())
	}
}
