// Package feed keeps marketdata-svc's daily prices current from a data
// provider (`marketdata-svc sync`): each provider is an adapter of one
// small interface, in a package of its own (feed/marketstack, feed/tiingo,
// feed/eodhd, feed/stooq), that maps the provider's documented answers to
// Records; this package turns them into bars, refuses and reports bad
// ones, and stores the rest through the importer's one load path
// (importer.Load), so a sync is validated, locked, re-adjusted and
// versioned exactly as an import is.
//
// A run is incremental (each symbol from the day after what is stored),
// idempotent (the load upserts only what differs), resumable (the windows
// committed are recorded in sync_progress after each load) and bounded
// against the provider (Client: a token bucket, Retry-After, capped
// exponential backoff with jitter, a timeout per request).
package feed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Provider is a data vendor's adapter.
type Provider interface {
	// Name is the provider's name, as in --provider and in
	// MARKETDATA_SYNC_<NAME>_TOKEN.
	Name() string
	// History returns symbol's daily bars dated within w, with the splits
	// and dividends whose ex-date is within w. A symbol the provider does
	// not know is ErrUnknownSymbol; a refused credential ErrUnauthorized.
	History(ctx context.Context, symbol string, w Window) (History, error)
}

// Bulk is a provider that answers a whole exchange's trading day in one
// call, the way to keep a full universe current.
type Bulk interface {
	Provider
	// ExchangeDay returns the bars, splits and dividends of every symbol
	// listed on exchange (a MIC) for day. ok is false when the provider
	// does not cover the exchange.
	ExchangeDay(ctx context.Context, exchange string, day time.Time) (d *Day, ok bool, err error)
}

// Lister is a provider that lists the symbols of an exchange, used when
// the store lists none for --exchange yet.
type Lister interface {
	Symbols(ctx context.Context, exchange string) ([]string, error)
}

// Starter is a provider that tells where a symbol's history begins, so
// that the backfill of a symbol with nothing stored asks from there, not
// from --backfill-from.
type Starter interface {
	FirstDay(ctx context.Context, symbol string) (time.Time, error)
}

// Window is a span of days, both ends included.
type Window struct{ From, To time.Time }

// Contains tells whether day d is within w.
func (w Window) Contains(d time.Time) bool { return !d.Before(w.From) && !d.After(w.To) }

// History is one symbol's answer.
type History struct {
	Records   []Record
	Splits    []marketdata.Split
	Dividends []marketdata.Dividend
	// Rejects are the provider's records the adapter could not read.
	Rejects []Reject
}

// Day is one exchange's trading day. Its records are kept out of memory
// (a spooled answer), so Records may be called more than once, as a load
// that retries its bars through a staging table does.
type Day struct {
	Records   func() (RecordSource, error)
	Splits    []marketdata.Split
	Dividends []marketdata.Dividend
	Rejects   []Reject
	// Close releases what the day holds (its spooled answer).
	Close func() error
}

// RecordSource streams records. When Next returns false, Err tells
// whether the stream failed.
type RecordSource interface {
	Next() bool
	Record() Record
	Err() error
}

// Record is one daily bar as a provider wrote it, before it is checked.
type Record struct {
	Symbol                         string
	Date                           string
	Open, High, Low, Close, Volume Number
	// SplitFactor and Dividend are the corporate actions some providers
	// carry on the bar of their ex-date (Tiingo); absent elsewhere.
	SplitFactor, Dividend Number
}

// JSONBar is a daily bar's fields as the JSON providers name them, for an
// adapter's row type to embed.
type JSONBar struct {
	Date   string `json:"date"`
	Open   Number `json:"open"`
	High   Number `json:"high"`
	Low    Number `json:"low"`
	Close  Number `json:"close"`
	Volume Number `json:"volume"`
}

// Record is b as a record of symbol.
func (b JSONBar) Record(symbol string) Record {
	return Record{Symbol: symbol, Date: b.Date, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume}
}

// Number is a JSON or CSV value read leniently: a JSON number, a numeric
// string, null or absent. Set tells it was present; Bad keeps what could
// not be read, so the record is refused with that reason.
type Number struct {
	V   float64
	Set bool
	Bad string
}

// UnmarshalJSON reads a number, a string holding one, or null.
func (n *Number) UnmarshalJSON(b []byte) error {
	*n = Number{}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s := string(b)
	if len(b) >= 2 && b[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			n.Bad = s
			return nil
		}
		s = u
	}
	*n = ParseNumber(s)
	return nil
}

// ParseNumber reads s as a Number; "" is absent.
func ParseNumber(s string) Number {
	if s == "" {
		return Number{}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Number{Bad: s, Set: true}
	}
	return Number{V: v, Set: true}
}

// Reject is a record that was not stored, and why.
type Reject struct {
	Provider, Symbol, Date, Reason string
}

func (r Reject) String() string {
	return fmt.Sprintf("%s %s %s: %s", r.Provider, r.Symbol, r.Date, r.Reason)
}

// Errors an adapter returns for the runner to classify.
var (
	// ErrUnknownSymbol: the provider does not know the symbol. The symbol
	// fails; the others go on.
	ErrUnknownSymbol = errors.New("unknown to the provider")
	// ErrUnauthorized: the provider refused the credential. Every request
	// would fail alike, so the run stops.
	ErrUnauthorized = errors.New("credential refused by the provider")
)

// ParseDate reads a provider's date: 2006-01-02, alone or starting a
// timestamp (2006-01-02T00:00:00+0000, 2006-01-02T00:00:00.000Z).
func ParseDate(s string) (time.Time, error) {
	if len(s) < 10 {
		return time.Time{}, fmt.Errorf("invalid date %q", s)
	}
	d, err := time.Parse(time.DateOnly, s[:10])
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid date %q", s)
	}
	return d, nil
}

// bar turns r into a bar of w, or says why it is refused: a malformed or
// missing number or date, a date outside w, or what importer.CheckBar
// refuses (checked by the caller).
func bar(r Record, w Window) (ingest.BarRow, string) {
	b := ingest.BarRow{Symbol: r.Symbol}
	d, err := ParseDate(r.Date)
	if err != nil {
		return b, err.Error()
	}
	b.Date = d
	if !w.Contains(d) {
		return b, fmt.Sprintf("date %s outside the requested window %s..%s", d.Format(time.DateOnly),
			w.From.Format(time.DateOnly), w.To.Format(time.DateOnly))
	}
	// A loop over the fields with pointers into b would move b to the
	// heap: an allocation per bar of a bulk day.
	var reason string
	field := func(name string, n Number, optional bool) float64 {
		switch {
		case reason != "":
		case n.Bad != "":
			reason = fmt.Sprintf("malformed %s %q", name, n.Bad)
		case !n.Set && !optional:
			reason = "missing " + name
		}
		return n.V
	}
	b.Open, b.High, b.Low = field("open", r.Open, false), field("high", r.High, false), field("low", r.Low, false)
	b.Close, b.Volume = field("close", r.Close, false), field("volume", r.Volume, true)
	b.SplitFactor, b.Dividend = field("split factor", r.SplitFactor, true), field("dividend", r.Dividend, true)
	if reason != "" {
		return b, reason
	}
	if b.SplitFactor < 0 || b.Dividend < 0 {
		return b, "negative corporate action"
	}
	return b, ""
}
