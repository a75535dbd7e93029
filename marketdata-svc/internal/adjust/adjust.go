// Package adjust computes split- and dividend-adjusted prices with the
// CRSP-style backward method.
//
// For a bar on day d:
//
//	price factor(d)  = Π over events e with ex-date > d of  f(e)
//	  f(split with factor k)      = 1 / k
//	  f(cash dividend D)          = 1 − D / C,  C = raw close of the last
//	                                trading day before the ex-date
//	volume factor(d) = Π over splits with ex-date > d of  k
//
//	adj_open = open × price factor, … adj_close = close × price factor
//	adj_volume = volume × volume factor
//
// The latest bar has factors 1: adjusted prices are in today's terms, and a
// new event only changes bars before its ex-date.
package adjust

import (
	"math"
	"sort"
	"time"
)

// Event is a corporate action on its ex-date. SplitFactor is new shares per
// old share (4 for 4:1); 0 or 1 means no split. Dividend is cash per share;
// 0 means none. DividendRatio, when in (0, 1], is the dividend's price ratio
// as its source published it and replaces 1 − D/C: the source knew the
// close before the ex-date, which a series ending earlier does not hold.
type Event struct {
	Date          time.Time
	SplitFactor   float64
	Dividend      float64
	DividendRatio float64
}

// Factors returns the backward price and volume factors of bars with the
// given dates (strictly ascending) and raw closes. A dividend that is not
// smaller than the previous close, or that has no previous trading day in
// the series, cannot be expressed as a ratio and is ignored.
func Factors(dates []time.Time, closes []float64, events []Event) (price, volume []float64) {
	n := len(dates)
	price, volume = make([]float64, n), make([]float64, n)
	evs := append([]Event(nil), events...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Date.After(evs[j].Date) })
	p, v := 1.0, 1.0
	k := 0 // next event (newest first) not yet folded in
	for i := n - 1; i >= 0; i-- {
		// Fold in every event after day i; bar i is the last trading day
		// before each of them, so its close is their "previous close".
		for k < len(evs) && evs[k].Date.After(dates[i]) {
			pf, vf := eventFactors(evs[k], closes[i])
			p *= pf
			v *= vf
			k++
		}
		price[i], volume[i] = p, v
	}
	return price, volume
}

func eventFactors(e Event, prevClose float64) (price, volume float64) {
	price, volume = 1, 1
	if e.SplitFactor > 0 && e.SplitFactor != 1 {
		price /= e.SplitFactor
		volume *= e.SplitFactor
	}
	switch {
	case e.DividendRatio > 0 && e.DividendRatio <= 1:
		price *= e.DividendRatio
	case e.Dividend > 0 && prevClose > e.Dividend:
		price *= 1 - e.Dividend/prevClose
	}
	return price, volume
}

// Price returns raw × factor, rounded to 6 decimals when an adjustment
// applies so that floating-point noise (99.99999999999999) does not reach
// clients; unadjusted values are returned bit for bit.
func Price(raw, factor float64) float64 {
	if factor == 1 {
		return raw
	}
	return math.Round(raw*factor*1e6) / 1e6
}
