package marketdata

import "time"

// EODChanges is what some imports changed in the EOD bars served: for
// each symbol, the earliest date from which its bars may differ (a bar
// added, restated or removed on that date, or on later ones). A zero date
// is every date of the symbol: a split or a dividend changes the adjusted
// values of all its earlier bars. A symbol absent changed nothing.
//
// A nil EODChanges is changes unknown: anything may have changed, as an
// import of tickers or of anything else than EOD bars may have.
type EODChanges map[string]time.Time

// Affects reports whether c may change q's page, which depends only on
// the bars of q's symbols within [DateFrom, DateTo] (with their ticker
// fields, which no change described here touches). A change from date d
// reaches the page unless d is after DateTo: an open DateTo reaches every
// date to come, and a page of the latest bars (Latest) is no exception.
// Unknown changes, and a query that names no symbols, are always
// affected.
func (c EODChanges) Affects(q EODQuery) bool {
	if c == nil || len(q.Symbols) == 0 {
		return true
	}
	for _, s := range q.Symbols {
		from, ok := c[s]
		if !ok {
			continue
		}
		if from.IsZero() || q.DateTo.IsZero() || !dayAfter(from, q.DateTo) {
			return true
		}
	}
	return false
}

// dayAfter reports whether a's calendar date is after b's, as the
// database compares the dates of bars.
func dayAfter(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC).After(time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC))
}
