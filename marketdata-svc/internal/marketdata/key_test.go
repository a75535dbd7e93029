package marketdata

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// The cache serves a page under its query's key to every query with the
// same key, so a key must encode everything the store reads, exactly as
// the store reads it. Each test below draws many queries from small pools
// of values, so that many share a key, and checks the property: queries
// with the same key have the same store view, the fields the store reads,
// normalised as the store normalises them (marketdatadb). Values are drawn
// from what the HTTP layer can build: symbols and MICs are validated, a
// search is any text, instants have any precision and offset.

// keyPropertyRounds is how many queries each property test draws.
const keyPropertyRounds = 20_000

// checkKeyProperty draws keyPropertyRounds queries with gen and fails when
// two share a key but not their store view.
func checkKeyProperty[Q any](t *testing.T, gen func(r *rand.Rand) Q, key func(Q) string, view func(Q) any) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]Q{}
	shared := 0
	for range keyPropertyRounds {
		q := gen(r)
		k := key(q)
		first, ok := seen[k]
		if !ok {
			seen[k] = q
			continue
		}
		shared++
		if a, b := view(first), view(q); !reflect.DeepEqual(a, b) {
			t.Fatalf("one key, two store views:\nkey  %s\nview %+v\nview %+v", k, a, b)
		}
	}
	if shared == 0 {
		t.Fatal("no two queries shared a key: the pools are too large to test anything")
	}
}

func pick[T any](r *rand.Rand, pool ...T) T { return pool[r.IntN(len(pool))] }

var keySymbolPools = [][]string{nil, {"GOOG"}, {"GOOG", "MSFT"}, {"MSFT", "GOOG"}, {"GSPC.INDX"}, {"BRK-B", "^GSPC"}}

// keyInstant draws instants one nanosecond, a microsecond or half a second
// apart, written in UTC or at an offset.
func keyInstant(r *rand.Rand) time.Time {
	if r.IntN(4) == 0 {
		return time.Time{}
	}
	t := time.Date(2024, 3, 8, 19, 59, 0, 0, time.UTC).Add(pick(r, time.Duration(0), time.Nanosecond, time.Microsecond, 500*time.Millisecond, time.Minute))
	return t.In(pick(r, time.UTC, time.FixedZone("", 5*3600), time.FixedZone("", -4*3600)))
}

// keyDay draws calendar days as ParseDate makes them (UTC midnight), or
// zero.
func keyDay(r *rand.Rand) time.Time {
	if r.IntN(3) == 0 {
		return time.Time{}
	}
	return time.Date(2024, 3, pick(r, 7, 8), 0, 0, 0, 0, time.UTC)
}

// instantView is an instant as the store reads it: the instant itself,
// whatever zone it is written in; zero for an open bound.
func instantView(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// dayView is a day as the store reads it: the calendar date written.
func dayView(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Format(time.DateOnly)
}

func pageView(latest bool, sort SortOrder, limit, offset int) any {
	return []any{latest, sort == SortAsc, max(limit, 0), offset}
}

func TestIntradayKeyEncodesWhatTheStoreReads(t *testing.T) {
	checkKeyProperty(t, func(r *rand.Rand) IntradayQuery {
		return IntradayQuery{Symbols: pick(r, keySymbolPools...), Exchange: pick(r, "", "XNAS", "INDX"),
			From: keyInstant(r), To: keyInstant(r), FromDay: keyDay(r), ToDay: keyDay(r),
			Interval: pick(r, 1, 60, DayMinutes), AfterHours: r.IntN(2) == 0, Latest: r.IntN(2) == 0,
			Sort: pick(r, SortAsc, SortDesc), Limit: pick(r, 1, 100), Offset: pick(r, 0, 1)}
	}, IntradayQuery.CanonicalKey, func(q IntradayQuery) any {
		return []any{q.Symbols, q.Exchange, instantView(q.From), instantView(q.To), dayView(q.FromDay), dayView(q.ToDay),
			q.Interval, q.AfterHours, pageView(q.Latest, q.Sort, q.Limit, q.Offset)}
	})
}

func TestEODKeyEncodesWhatTheStoreReads(t *testing.T) {
	checkKeyProperty(t, func(r *rand.Rand) EODQuery {
		return EODQuery{Symbols: pick(r, keySymbolPools...), Exchange: pick(r, "", "XNAS"),
			DateFrom: keyDay(r), DateTo: keyDay(r), Latest: r.IntN(2) == 0,
			Sort: pick(r, SortAsc, SortDesc), Limit: pick(r, 1, 100), Offset: pick(r, 0, 1)}
	}, EODQuery.CanonicalKey, func(q EODQuery) any {
		return []any{q.Symbols, q.Exchange, dayView(q.DateFrom), dayView(q.DateTo), pageView(q.Latest, q.Sort, q.Limit, q.Offset)}
	})
}

func TestTickerKeyEncodesWhatTheStoreReads(t *testing.T) {
	checkKeyProperty(t, func(r *rand.Rand) TickerQuery {
		return TickerQuery{Symbols: pick(r, keySymbolPools...), Search: pick(r, "", "goog", "|x=XNAS", "a|limit=1"),
			Exchange: pick(r, "", "XNAS"), Limit: pick(r, 1, 100), Offset: pick(r, 0, 1)}
	}, TickerQuery.CanonicalKey, func(q TickerQuery) any {
		search := q.Search
		if len(q.Symbols) > 0 {
			search = "" // a symbols query reads no search
		}
		return []any{q.Symbols, search, q.Exchange, q.Limit, q.Offset}
	})
}
