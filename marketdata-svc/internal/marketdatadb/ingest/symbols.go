package ingest

import "slices"

// symbolSet gathers the distinct symbols of a stream of bars. A load
// needs them sorted (tickers, locks, factors), and bars come grouped by
// symbol or sorted by it, so a list appended to when the symbol changes,
// sorted and compacted whenever it doubles, costs less than a map (a bulk
// day is one bar of each of 50,000 symbols: a map spent more on its
// inserts than the parsing did) and holds at most twice the distinct
// symbols however the rows are ordered.
type symbolSet struct {
	list  []string
	limit int
}

// add records sym.
func (s *symbolSet) add(sym string) {
	if n := len(s.list); n > 0 && s.list[n-1] == sym {
		return
	}
	s.list = append(s.list, sym)
	if len(s.list) >= max(s.limit, 4096) {
		s.compact()
		s.limit = 2 * len(s.list)
	}
}

func (s *symbolSet) compact() {
	slices.Sort(s.list)
	s.list = slices.Compact(s.list)
}

// sorted returns the distinct symbols added, in order.
func (s *symbolSet) sorted() []string {
	s.compact()
	return slices.Clip(s.list)
}
