package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNextWeekday(t *testing.T) {
	for in, want := range map[string]string{"2025-12-31": "2026-01-01", "2026-01-02": "2026-01-05", "2026-01-03": "2026-01-05"} {
		d, _ := time.Parse(time.DateOnly, in)
		if got := nextWeekday(d).Format(time.DateOnly); got != want {
			t.Errorf("nextWeekday(%s) = %s, want %s", in, got, want)
		}
	}
}

// The warmed pages: mostly historical windows of untouched symbols, the
// affected symbols only in affected pages, open windows without an end,
// and every window that has an end closed before the day.
func TestUpdatePages(t *testing.T) {
	first, _ := time.Parse(time.DateOnly, "2016-01-01")
	last, _ := time.Parse(time.DateOnly, "2025-12-31")
	in := scaleInputs{Days: weekdays(first, last)}
	for i := range 400 {
		in.Symbols = append(in.Symbols, newSymbol(i)+"X")
	}
	affected := in.Symbols[10:30]
	pages := updatePagesOf(scaleRand(1, "t"), in, affected, 400)
	if len(pages) != 400 {
		t.Fatalf("%d pages", len(pages))
	}
	count := map[string]int{}
	for _, p := range pages {
		count[p.Kind]++
		q := p.Path[strings.Index(p.Path, "?")+1:]
		var syms []string
		var to string
		for _, kv := range strings.Split(q, "&") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "symbols":
				syms = strings.Split(v, ",")
			case "date_to":
				to = v
			}
		}
		touched := slices.ContainsFunc(syms, func(s string) bool { return slices.Contains(affected, s) })
		switch p.Kind {
		case pageHistorical:
			if touched || to == "" || to > "2025-12-31" {
				t.Errorf("historical page %s touches the day", p.Path)
			}
		case pageAffected:
			if !touched || to == "" || to > "2025-12-31" {
				t.Errorf("affected page %s", p.Path)
			}
		case pageOpen:
			if touched || to != "" {
				t.Errorf("open page %s", p.Path)
			}
		default:
			t.Errorf("page %s of kind %q", p.Path, p.Kind)
		}
	}
	if count[pageHistorical] < 280 || count[pageAffected] < 20 || count[pageOpen] < 20 {
		t.Errorf("kinds %v", count)
	}
	if again := updatePagesOf(scaleRand(1, "t"), in, affected, 400); !slices.Equal(again, pages) {
		t.Error("the same seed drew other pages")
	}
}

func TestGradeUpdate(t *testing.T) {
	pages := []updatePage{{pageHistorical, "a"}, {pageHistorical, "b"}, {pageAffected, "c"}, {pageOpen, "d"}}
	exact := pageResults(pages, []bool{true, true, true, true}, []bool{true, true, false, false})
	all := pageResults(pages, []bool{true, true, true, true}, []bool{false, false, false, false})
	if exact[0].ExactWanted != 2 || exact[0].HitsAfter != 2 || exact[1].Pages != 1 {
		t.Fatalf("page results %+v", exact)
	}
	u := ScaleUpdate{Sync: ImportResult{ImportSeconds: 40, ImportMaxRSSMB: 100}, P99Ratio: 1.5,
		Recompute: UpdateRecompute{RowsUpdated: 100, AffectedRows: 200}, Pages: exact}
	gradeUpdate(&u, false)
	if u.Status != "pass" {
		t.Errorf("all targets held: %s %v", u.Status, u.Statuses)
	}
	u.Pages = all
	u.Recompute.RowsUpdated = 300
	gradeUpdate(&u, false)
	if u.Status != "miss" || u.Statuses["cache"] != "miss" || u.Statuses["recompute"] != "miss" || u.Statuses["seconds"] != "pass" {
		t.Errorf("every page invalidated, too many rows updated: %s %v", u.Status, u.Statuses)
	}
	gradeUpdate(&u, true)
	if u.Status != "report" || u.Note == "" {
		t.Errorf("small size alone: %s", u.Status)
	}
	if hitRate([]bool{true, false, false, false}) != 0.25 || hitRate(nil) != 0 {
		t.Error("hitRate")
	}
}

func TestLoadFigures(t *testing.T) {
	t0 := time.Now()
	var s []loadSample
	for i := range 100 {
		s = append(s, loadSample{start: t0.Add(time.Duration(i) * 10 * time.Millisecond), took: time.Duration(i+1) * time.Millisecond})
	}
	s = append(s, loadSample{start: t0.Add(500 * time.Millisecond), err: true}, loadSample{start: t0.Add(-time.Second), took: time.Hour})
	f := loadFigures(s, t0, t0.Add(time.Second))
	if f.Requests != 101 || f.Errors != 1 || f.P50Ms != 50 || f.P99Ms != 99 || f.RPS != 101 {
		t.Errorf("%+v", f)
	}
}

func TestRenderScaleUpdate(t *testing.T) {
	u := &ScaleUpdate{Size: "small", Day: "2026-01-01", Symbols: 50_000, Existing: 400, New: 49_600, Splits: []string{"AB"}, Dividend: []string{"CD"},
		Pages: []PageResult{{Kind: pageHistorical, Pages: 3, HitsBefore: 3, ExactWanted: 3}}, Statuses: map[string]string{"seconds": "pass"}}
	var b strings.Builder
	renderScaleUpdate(func(f string, a ...any) { b.WriteString(strings.TrimSpace(f)) }, u)
	rows := updateResultRows(u)
	if strings.Count(rows, "\n") != 4 || !strings.Contains(rows, "| 0.000 → 0.000 |") || !strings.Contains(b.String(), "scale_update") {
		t.Errorf("rows:\n%s", rows)
	}
	for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
		if n := strings.Count(line, "|"); n != 14 {
			t.Errorf("%d cells: %s", n-1, line)
		}
	}
}

func TestDayBarOf(t *testing.T) {
	want := "LATERAL (SELECT ctid FROM eod_bars b WHERE b.symbol = t.symbol AND b.date = '2026-01-01' LIMIT 1) x"
	if got := dayBarOf("t", "2026-01-01", "ctid"); got != want {
		t.Errorf("got %s", got)
	}
}
