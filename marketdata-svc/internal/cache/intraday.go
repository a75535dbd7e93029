package cache

import (
	"context"
	"errors"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// errNoIntraday reports an inner store that serves no intraday bars.
var errNoIntraday = errors.New("intraday: the store serves no intraday bars")

// intradayEntry is a cached intraday page with the time it was read.
type intradayEntry struct {
	page marketdata.IntradayPage
	at   time.Time
}

// IntradayOpenBound is the longest an intraday page whose range reaches a
// session still trading is served from the cache: new minutes arrive
// without an import that would bump the data version. A page's bound is the
// shorter of this and its bar interval.
const IntradayOpenBound = time.Minute

// intradayMaxAge is how long a page of q may be served: the TTL for a
// closed range (the data version keeps it fresh), else min(interval,
// IntradayOpenBound).
func intradayMaxAge(q marketdata.IntradayQuery, p marketdata.IntradayPage, ttl time.Duration) time.Duration {
	if !p.Open {
		return ttl
	}
	return min(ttl, time.Duration(q.Interval)*time.Minute, IntradayOpenBound)
}

// Intraday answers from process memory at the current data version, else
// from the inner store. Pages whose range reaches a session still trading
// are served for at most intradayMaxAge.
func (s *Store) Intraday(ctx context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	inner, ok := s.Store.(marketdata.IntradayStore)
	if !ok {
		return marketdata.IntradayPage{}, errNoIntraday
	}
	v, ok := s.versions.Current()
	if !ok {
		s.metrics.fallbacks.Inc()
		return inner.Intraday(ctx, q)
	}
	key := string(appendVersion(nil, v)) + q.CanonicalKey()
	if val, ok := s.memory.get([]byte(key)); ok {
		e := val.(intradayEntry)
		if s.now().Sub(e.at) < intradayMaxAge(q, e.page, s.memory.ttl) {
			s.metrics.hits.Inc()
			return e.page, nil
		}
	}
	s.metrics.misses.Inc()
	res, err := s.shared(ctx, key, func(ctx context.Context) (any, error) {
		page, err := inner.Intraday(ctx, q)
		if err != nil {
			return nil, err
		}
		s.memory.put(key, intradayEntry{page: page, at: s.now()}, 64+len(page.Bars)*96)
		return page, nil
	})
	if err != nil {
		return marketdata.IntradayPage{}, err
	}
	return res.(marketdata.IntradayPage), nil
}
