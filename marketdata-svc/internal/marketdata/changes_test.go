package marketdata

import (
	"testing"
	"time"
)

// The day's import of the cases below: a bar of AAA and of BBB on
// 2024-03-08, and a split of SPL, which reaches every date of it.
func TestEODChangesAffects(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	changes := EODChanges{"AAA": day("2024-03-08"), "BBB": day("2024-03-08"), "SPL": {}}
	window := func(from, to string, symbols ...string) EODQuery {
		q := EODQuery{Symbols: symbols, Sort: SortDesc, Limit: 100}
		if from != "" {
			q.DateFrom = day(from)
		}
		if to != "" {
			q.DateTo = day(to)
		}
		return q
	}
	latest := func(q EODQuery) EODQuery { q.Latest = true; return q }
	onExchange := func(q EODQuery) EODQuery { q.Exchange = "XNAS"; return q }
	cases := []struct {
		name    string
		changes EODChanges
		q       EODQuery
		want    bool
	}{
		{"untouched symbol, historical window", changes, window("2023-01-01", "2023-12-31", "CCC"), false},
		{"untouched symbol, open window", changes, window("2023-01-01", "", "CCC"), false},
		{"touched symbol, window before the new day", changes, window("2024-01-01", "2024-03-07", "AAA"), false},
		{"touched symbol, window ending on the new day", changes, window("2024-01-01", "2024-03-08", "AAA"), true},
		{"touched symbol, window reaching past the new day", changes, window("2024-01-01", "2024-12-31", "AAA"), true},
		{"touched symbol, window of the new day alone", changes, window("2024-03-08", "2024-03-08", "AAA"), true},
		{"touched symbol, open window", changes, window("2024-01-01", "", "AAA"), true},
		{"touched symbol, no dates at all", changes, window("", "", "AAA"), true},
		{"one touched symbol among untouched ones", changes, window("2024-01-01", "", "CCC", "BBB", "DDD"), true},
		{"several symbols, window before the new day", changes, window("", "2024-03-07", "CCC", "AAA", "BBB"), false},
		{"split: every date, old window", changes, window("1999-01-01", "1999-12-31", "SPL"), true},
		{"split among untouched symbols", changes, window("1999-01-01", "1999-12-31", "CCC", "SPL"), true},
		{"latest, open window, touched", changes, latest(window("", "", "AAA", "CCC")), true},
		{"latest, open window, untouched", changes, latest(window("", "", "CCC", "DDD")), false},
		{"latest as of a day before the new one", changes, latest(window("", "2024-03-07", "AAA")), false},
		{"latest, split", changes, latest(window("", "2000-01-01", "SPL")), true},
		{"exchange filter, untouched symbol", changes, onExchange(window("2023-01-01", "", "CCC")), false},
		{"exchange filter, touched symbol, old window", changes, onExchange(window("2023-01-01", "2023-12-31", "AAA")), false},
		{"exchange filter, touched symbol, open window", changes, onExchange(window("2023-01-01", "", "AAA")), true},
		{"exchange-wide page (no symbols)", changes, onExchange(window("2023-01-01", "2023-12-31")), true},
		{"no symbols, no changes", EODChanges{}, window("2023-01-01", "2023-12-31"), true},
		{"changes unknown", nil, window("2023-01-01", "2023-12-31", "CCC"), true},
		{"nothing changed", EODChanges{}, window("2024-01-01", "", "AAA"), false},
	}
	for _, c := range cases {
		if got := c.changes.Affects(c.q); got != c.want {
			t.Errorf("%s: Affects(%+v) = %v, want %v", c.name, c.q, got, c.want)
		}
	}
}
