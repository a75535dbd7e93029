package main

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

func intradayLines(t *testing.T, s intradaySpec) []string {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	n, err := writeIntraday(w, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if s.header {
		if lines[0]+"\n" != intradayCSVHeader {
			t.Fatalf("header %q", lines[0])
		}
		lines = lines[1:]
	}
	if len(lines) != n {
		t.Fatalf("wrote %d lines, reported %d", len(lines), n)
	}
	return lines
}

// A month written alone is exactly that month's part of the whole file,
// so the dataset loaded month by month equals the file the importer reads.
func TestIntradayMonthIsPartOfWhole(t *testing.T) {
	whole := intradayLines(t, intradaySpec{symbols: 3, days: 45, prefix: "T", seed: 5, header: true})
	if want := 3 * 45 * sessionMinutes; len(whole) != want {
		t.Fatalf("%d rows, want %d", len(whole), want)
	}
	feb := intradayLines(t, intradaySpec{symbols: 3, days: 45, prefix: "T", seed: 5, month: "2025-02"})
	var fromWhole []string
	for _, l := range whole {
		if strings.Contains(l, ",2025-02-") {
			fromWhole = append(fromWhole, l)
		}
	}
	if len(feb) == 0 || strings.Join(feb, "\n") != strings.Join(fromWhole, "\n") {
		t.Fatalf("February alone (%d rows) differs from February in the whole file (%d rows)", len(feb), len(fromWhole))
	}
}

// Rows of a month come in primary-key order (symbol, ts) with no
// duplicates, on weekdays, inside the New York regular session.
func TestIntradayRowsInKeyOrderInSession(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	lines := intradayLines(t, intradaySpec{symbols: 2, days: 60, prefix: "T", seed: 1, month: "2025-03"})
	prevSym, prevTS := "", time.Time{}
	for _, l := range lines {
		f := strings.Split(l, ",")
		if len(f) != 7 {
			t.Fatalf("line %q: %d fields", l, len(f))
		}
		ts, err := time.Parse(time.RFC3339, f[1])
		if err != nil {
			t.Fatal(err)
		}
		if f[0] < prevSym || (f[0] == prevSym && !ts.After(prevTS)) {
			t.Fatalf("%s %s after %s %s: not in key order", f[0], f[1], prevSym, prevTS)
		}
		local := ts.In(ny)
		if m := local.Hour()*60 + local.Minute(); m < 570 || m >= 960 || local.Weekday() == time.Saturday || local.Weekday() == time.Sunday {
			t.Fatalf("%s is outside the session", f[1])
		}
		var v [5]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[2+i], 64); err != nil {
				t.Fatal(err)
			}
		}
		if o, h, lo, c := v[0], v[1], v[2], v[3]; h < max(o, c) || lo > min(o, c) || lo <= 0 || v[4] < 1 {
			t.Fatalf("line %q: not a consistent bar", l)
		}
		prevSym, prevTS = f[0], ts
	}
}

func TestIntradayRejectsDaysPast2025(t *testing.T) {
	var buf bytes.Buffer
	if _, err := writeIntraday(bufio.NewWriter(&buf), intradaySpec{symbols: 1, days: IntradayMaxDays + 1, prefix: "T"}); err == nil {
		t.Fatal("want an error for days beyond 2025")
	}
	if last := intradayDay(IntradayMaxDays - 1); last.Year() != 2025 || last.Weekday() == time.Saturday || last.Weekday() == time.Sunday {
		t.Fatalf("last day %s", last)
	}
}
