package marketdata

import "time"

// IndexQuote is an index (a ticker of AssetIndex) with its latest close
// and the closes the changes of /v2/indexinfo are computed from. A close
// the index has no bar for (its history is shorter) is nil.
type IndexQuote struct {
	Ticker Ticker
	// Date and Close are the index's latest bar.
	Date  time.Time
	Close float64
	// Previous is the close of the bar before the latest; Week, Month and
	// Year the last close on or before a week, a month and a year before
	// Date.
	Previous, Week, Month, Year *float64
}

// IndexQuery selects indices: the one named by Symbol, or every index by
// symbol when it is empty.
type IndexQuery struct {
	Symbol string
	Limit  int
	Offset int
}

// IndexPage is one page of indices ordered by symbol; an index without
// bars has no quote and is left out. Total counts every index that has one.
type IndexPage struct {
	Indices []IndexQuote
	Total   int64
}
