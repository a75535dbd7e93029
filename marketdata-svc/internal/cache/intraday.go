package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// errNoIntraday reports an inner store that serves no intraday bars.
var errNoIntraday = errors.New("intraday: the store serves no intraday bars")

// IntradayOpenBound is the longest an intraday page whose range reaches a
// session still trading is served from the cache: new minutes arrive
// without an import that would bump the data version. A page's bound is the
// shorter of this and its bar interval.
const IntradayOpenBound = time.Minute

// Intraday answers as EncodedEOD does, through the same two layers and
// data version; a page whose range reaches a session still trading is
// served, from either layer, for at most min(TTL, its interval,
// IntradayOpenBound) after it was read from the store.
func (s *Store) Intraday(ctx context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	inner, ok := s.Store.(marketdata.IntradayStore)
	if !ok {
		return marketdata.IntradayPage{}, errNoIntraday
	}
	v, known := s.versions.Current()
	var buf [160]byte
	key := q.AppendCanonicalKey(appendVersion(buf[:0], v))
	return lookup[marketdata.IntradayPage](ctx, s, intradayPages{q: q, inner: inner}, v, known, key)
}

// intradayPages are intraday pages, kept as the domain's pages (their
// encoding differs by API version and wrapper).
type intradayPages struct {
	q     marketdata.IntradayQuery
	inner marketdata.IntradayStore
}

func (k intradayPages) redisKey(v int64) string {
	return entryKey(intradayPrefix, v, k.q.CacheKey())
}

func (k intradayPages) load(ctx context.Context) (marketdata.IntradayPage, error) {
	return k.inner.Intraday(ctx, k.q)
}

// life is the TTL for a closed range (the data version keeps it fresh),
// else min(TTL, interval, IntradayOpenBound).
func (k intradayPages) life(p marketdata.IntradayPage, ttl time.Duration) time.Duration {
	if !p.Open {
		return ttl
	}
	return min(ttl, time.Duration(k.q.Interval)*time.Minute, IntradayOpenBound)
}

func (intradayPages) size(p marketdata.IntradayPage) int { return 64 + len(p.Bars)*96 }

// intradayEntry is an intraday page in Redis with when it was read from the
// store (unix nanoseconds), from which a replica reading it counts its life.
type intradayEntry struct {
	At   int64                   `json:"at"`
	Page marketdata.IntradayPage `json:"page"`
}

func (intradayPages) encode(p marketdata.IntradayPage, at time.Time) ([]byte, error) {
	b, err := json.Marshal(intradayEntry{At: at.UnixNano(), Page: p})
	if err != nil {
		return nil, fmt.Errorf("encode intraday entry: %w", err)
	}
	return b, nil
}

// unchangedBy is false: the changes describe EOD bars, not minutes.
func (intradayPages) unchangedBy(marketdata.EODChanges) bool { return false }

func (intradayPages) decode(b []byte) (marketdata.IntradayPage, time.Time, error) {
	var e intradayEntry
	if err := json.Unmarshal(b, &e); err != nil || e.At == 0 {
		return marketdata.IntradayPage{}, time.Time{}, errCorrupt
	}
	return e.Page, time.Unix(0, e.At), nil
}
