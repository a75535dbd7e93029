// Package marketdata holds the market-data domain: end-of-day bars, tickers,
// exchanges and corporate actions, the queries over them, and the Store
// interface that the HTTP layer and the cache consume.
package marketdata

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Domain errors. The HTTP layer maps them to marketstack error codes.
var (
	// ErrNotFound reports an unknown ticker or exchange.
	ErrNotFound = errors.New("not found")
	// ErrNoValidSymbols reports a query none of whose symbols is known.
	ErrNoValidSymbols = errors.New("no valid symbols provided")
	// ErrUnavailable reports that the store of record cannot be reached.
	ErrUnavailable = errors.New("store unavailable")
	// ErrTimeout reports a store of record too slow to answer in time.
	ErrTimeout = errors.New("store timeout")
)

// SortOrder orders records by date.
type SortOrder string

// Sort orders accepted by the API (marketstack's sort=DESC|ASC).
const (
	SortDesc SortOrder = "DESC"
	SortAsc  SortOrder = "ASC"
)

// Bar is one end-of-day record of a symbol, with raw and adjusted values
// and the ticker and exchange fields that marketstack repeats on each record.
type Bar struct {
	Symbol        string
	Date          time.Time // UTC midnight of the trading day
	Open          float64
	High          float64
	Low           float64
	Close         float64
	Volume        float64
	AdjOpen       float64
	AdjHigh       float64
	AdjLow        float64
	AdjClose      float64
	AdjVolume     float64
	SplitFactor   float64 // 1 on a day without a split
	Dividend      float64 // cash dividend with its ex-date on Date, else 0
	Name          string
	ExchangeCode  string // exchange acronym, e.g. NASDAQ
	Exchange      string // exchange MIC, e.g. XNAS
	AssetType     string // e.g. Stock, Index
	PriceCurrency string // ISO 4217, e.g. USD
}

// AssetIndex is the asset type of indices, whose records carry no
// adjusted values besides adj_close.
const AssetIndex = "Index"

// EODQuery selects end-of-day bars. Symbols are normalised (upper-case,
// de-duplicated, in request order) before a query reaches the store.
type EODQuery struct {
	Symbols  []string
	Exchange string    // MIC filter; empty for any
	DateFrom time.Time // inclusive; zero for open
	DateTo   time.Time // inclusive; zero for open
	// Latest keeps only each symbol's most recent bar within the range.
	Latest bool
	Sort   SortOrder
	Limit  int
	Offset int
}

// EODPage is one page of bars. Bars are ordered by date (Sort), and within a
// date by the order of Symbols in the query. Total counts every matching
// bar across all pages and symbols.
type EODPage struct {
	Bars  []Bar
	Total int64
}

// Exchange is a stock exchange, identified by its MIC.
type Exchange struct {
	MIC         string
	Name        string
	Acronym     string
	CountryCode string
	Country     string
	City        string
	Website     string
	Timezone    string // IANA name, e.g. America/New_York
	Currency    string // ISO 4217
}

// Ticker is a listed instrument. Exchange is nil when the listing exchange is
// unknown.
type Ticker struct {
	Symbol        string
	Name          string
	AssetType     string
	PriceCurrency string
	HasIntraday   bool
	HasEOD        bool
	Country       string // empty when unknown
	Exchange      *Exchange
}

// TickerQuery selects tickers: by Symbols when given, else by a free-text
// Search over symbol and name, optionally on one exchange.
type TickerQuery struct {
	Symbols  []string
	Search   string
	Exchange string
	Limit    int
	Offset   int
}

// TickerPage is one page of tickers, in request order for a Symbols query
// and by symbol otherwise.
type TickerPage struct {
	Tickers []Ticker
	Total   int64
}

// ExchangeQuery selects exchanges, optionally by free-text Search.
type ExchangeQuery struct {
	Search string
	Limit  int
	Offset int
}

// ExchangePage is one page of exchanges ordered by MIC.
type ExchangePage struct {
	Exchanges []Exchange
	Total     int64
}

// Split is a stock split with its ex-date. Factor is new shares per old
// share: 4 for a 4:1 split, 0.1 for a 1:10 reverse split.
type Split struct {
	Symbol string
	Date   time.Time
	Factor float64
}

// Dividend is a cash dividend per share with its ex-date. Ratio, when not
// zero, is the backward price ratio its source published, used instead of
// 1 - Amount/previous close when the store lacks the day before the ex-date.
type Dividend struct {
	Symbol string
	Date   time.Time
	Amount float64
	Ratio  float64
}

// ActionQuery selects splits or dividends.
type ActionQuery struct {
	Symbols  []string
	DateFrom time.Time
	DateTo   time.Time
	Sort     SortOrder
	Limit    int
	Offset   int
}

// SplitPage is one page of splits.
type SplitPage struct {
	Splits []Split
	Total  int64
}

// DividendPage is one page of dividends.
type DividendPage struct {
	Dividends []Dividend
	Total     int64
}

// Store is the read side of the store of record, as the API needs it.
// A query whose symbols are all unknown returns ErrNoValidSymbols; Ticker
// and Exchange return ErrNotFound for an unknown symbol or MIC.
type Store interface {
	EOD(ctx context.Context, q EODQuery) (EODPage, error)
	Tickers(ctx context.Context, q TickerQuery) (TickerPage, error)
	Ticker(ctx context.Context, symbol string) (Ticker, error)
	Exchanges(ctx context.Context, q ExchangeQuery) (ExchangePage, error)
	Exchange(ctx context.Context, mic string) (Exchange, error)
	Splits(ctx context.Context, q ActionQuery) (SplitPage, error)
	Dividends(ctx context.Context, q ActionQuery) (DividendPage, error)
	// Indices returns ErrNotFound when q names a symbol that is not an
	// index with bars.
	Indices(ctx context.Context, q IndexQuery) (IndexPage, error)
	DatasetStore
}

// CanonicalKey is the normalised text of a ticker query, as
// EODQuery.CanonicalKey is of an EOD query.
func (q TickerQuery) CanonicalKey() string {
	return string(q.AppendCanonicalKey(make([]byte, 0, 48+len(q.Search)+len(q.Symbols)*8)))
}

// AppendCanonicalKey appends CanonicalKey to b.
func (q TickerQuery) AppendCanonicalKey(b []byte) []byte {
	b = appendKeyScope(b, "tickers", q.Symbols, q.Exchange)
	b = append(b, "|limit="...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	b = append(b, "|offset="...)
	b = strconv.AppendInt(b, int64(q.Offset), 10)
	// Last, so that whatever the search holds cannot be read as another
	// field.
	b = append(b, "|q="...)
	return append(b, q.Search...)
}
