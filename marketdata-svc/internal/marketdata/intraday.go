package marketdata

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Intervals are marketstack's intraday intervals, their length in minutes
// and the longest range a query of the interval may span (MaxSpan). Every
// interval divides a day, so a bucket grid aligned to the session open is
// the same on every local day.
//
// Buckets are aggregated from the stored minutes at request time and the
// total counts every bucket of the range, so a query reads every minute of
// its range whatever its limit: MaxSpan is what bounds that work, to at
// most 90 days of minutes (about 35,000 regular-session minutes a symbol),
// and 7 days for 1min. A range given whole (date_from and date_to) longer
// than MaxSpan is refused; an open one is cut to MaxSpan (IntradayQuery).
var Intervals = []struct {
	Name    string
	Minutes int
	MaxSpan time.Duration
}{
	{"1min", 1, 7 * day}, {"5min", 5, 30 * day}, {"10min", 10, 30 * day}, {"15min", 15, 60 * day},
	{"30min", 30, 60 * day}, {"1hour", 60, 90 * day}, {"3hour", 180, 90 * day}, {"6hour", 360, 90 * day},
	{"12hour", 720, 90 * day}, {"24hour", 1440, 90 * day},
}

const day = 24 * time.Hour

// MaxSpan is the longest range a query of interval minutes may span (see
// Intervals); an unknown interval has the shortest.
func MaxSpan(interval int) time.Duration {
	for _, iv := range Intervals {
		if iv.Minutes == interval {
			return iv.MaxSpan
		}
	}
	return Intervals[0].MaxSpan
}

// DefaultInterval is marketstack's default interval, 1hour.
const DefaultInterval = 60

// DayMinutes is the 24hour interval: one bucket per local calendar day.
const DayMinutes = 1440

// ParseInterval reads an interval name (case-insensitive) as minutes.
func ParseInterval(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, iv := range Intervals {
		if iv.Name == s {
			return iv.Minutes, nil
		}
	}
	names := make([]string, len(Intervals))
	for i, iv := range Intervals {
		names[i] = iv.Name
	}
	return 0, fmt.Errorf("must be one of %s", strings.Join(names, ", "))
}

// IntradayQuery selects intraday bars, aggregated to Interval minutes from
// the stored 1-minute bars. A bound is either an instant (From, To: a
// timestamp the client gave) or a calendar day (FromDay, ToDay: a date,
// read on each symbol's exchange calendar, inclusive); zero for open.
//
// The range read is at most MaxSpan(Interval) long: from its start when it
// has one, else back from each symbol's last minute in it. (Latest reads
// only the four days before that minute, which hold its last bucket.)
type IntradayQuery struct {
	Symbols    []string
	Exchange   string
	From, To   time.Time
	FromDay    time.Time
	ToDay      time.Time
	Interval   int  // minutes, one of Intervals
	AfterHours bool // include bars outside the regular session
	// Latest keeps only each symbol's most recent bucket within the range.
	Latest bool
	Sort   SortOrder
	Limit  int
	Offset int
}

// IntradayBar is one aggregated bar: Date is the start of its bucket.
type IntradayBar struct {
	Symbol   string
	Exchange string // MIC
	// The ticker's fields v2 repeats on every bar, as on an EOD bar.
	Name, ExchangeCode, AssetType, PriceCurrency string
	Date                                         time.Time
	Open                                         float64
	High                                         float64
	Low                                          float64
	Close                                        float64
	Volume                                       float64
}

// IntradayPage is one page of bars, ordered by bucket start (Sort) and
// within one start by the order of the query's symbols. Total counts every
// matching bucket of all symbols.
type IntradayPage struct {
	Bars  []IntradayBar
	Total int64
	// Open reports that the page's range reaches the session still
	// trading (or one not closed a bucket ago): its answer may change
	// without an import, so caches bound its age.
	Open bool
}

// IntradayStore reads intraday bars. A query none of whose symbols is known
// returns ErrNoValidSymbols.
type IntradayStore interface {
	Intraday(ctx context.Context, q IntradayQuery) (IntradayPage, error)
}

// CanonicalKey is the normalised text of an intraday query, as
// EODQuery.CanonicalKey is of an EOD query.
func (q IntradayQuery) CanonicalKey() string {
	return string(q.AppendCanonicalKey(make([]byte, 0, 128+len(q.Symbols)*8)))
}

// AppendCanonicalKey appends CanonicalKey to b, for a lookup that need not
// allocate the key.
func (q IntradayQuery) AppendCanonicalKey(b []byte) []byte {
	b = appendKeyScope(b, "intraday", q.Symbols, q.Exchange)
	for _, t := range []time.Time{q.From, q.To} {
		b = append(b, "|t="...)
		if !t.IsZero() {
			// To the nanosecond: the store reads the instant exactly, so a
			// bound half a second later may select other minutes.
			b = t.UTC().AppendFormat(b, time.RFC3339Nano)
		}
	}
	for _, t := range []time.Time{q.FromDay, q.ToDay} {
		b = appendKeyDate(append(b, "|d="...), t)
	}
	b = append(b, "|i="...)
	b = strconv.AppendInt(b, int64(q.Interval), 10)
	b = append(b, "|ah="...)
	b = strconv.AppendBool(b, q.AfterHours)
	return appendKeyPage(b, q.Latest, q.Sort, q.Limit, q.Offset)
}

// CacheKey is a fixed-size digest of CanonicalKey.
func (q IntradayQuery) CacheKey() string { return keyDigest(q.CanonicalKey()) }

// ParseInstant reads a date_from/date_to value for intraday: a calendar
// date (day set, instant zero) or an ISO 8601 timestamp (instant set). A
// timestamp without an offset is read as UTC, as marketstack's are.
func ParseInstant(s string) (instant, day time.Time, err error) {
	s = strings.TrimSpace(s)
	if len(s) == 10 {
		day, err = ParseDate(s)
		return time.Time{}, day, err
	}
	if _, err := ParseDate(s); err != nil {
		return time.Time{}, time.Time{}, err
	}
	for _, layout := range dateLayouts {
		if t, perr := time.Parse(layout, s); perr == nil {
			return t.UTC(), time.Time{}, nil
		}
	}
	return time.Time{}, time.Time{}, fmt.Errorf("must be a date YYYY-MM-DD or an ISO 8601 timestamp")
}
