// Package generate makes deterministic synthetic end-of-day data for
// benchmarks and demos at scale. Every symbol is labelled as synthetic
// (symbol SYNnnnnn, name "Synthetic Company nnnnnn", exchange XSYN) and its
// series depends only on the seed and its index: the same seed gives the
// same rows, and a larger --symbols only adds symbols. A universe
// (universe.go) lists a vendor-sized catalogue of tickers with searchable
// names instead, on exchanges labelled as synthetic; its first tickers
// carry the same series under their own symbols.
//
// Prices follow a geometric random walk with a small drift; high and low
// enclose open and close; a stock splits 2:1 or 4:1 when it trades above
// 1,000 and reverse-splits 1:10 below 1; about a third of the symbols pay
// quarterly cash dividends, and the price drops by the dividend on the
// ex-date. Adjustment factors are computed with package adjust, exactly as
// the store would.
package generate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/adjust"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Exchange is the pseudo-exchange of the synthetic symbols.
var Exchange = marketdata.Exchange{MIC: "XSYN", Name: "Synthetic Exchange (generated data)", Acronym: "SYN",
	Timezone: "UTC", Currency: "USD"}

// DefaultEnd is the last generated trading day unless Options.End is set;
// a fixed date keeps the output independent of when it runs.
var DefaultEnd = time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)

// Options size the dataset.
type Options struct {
	Symbols int
	Years   int
	Seed    uint64
	End     time.Time
	// Universe, when above 0, is the number of tickers of a universe
	// (universe.go) listed in place of the SYNnnnnnn tickers; the first
	// Symbols of them have bars. Exchanges is the number of its exchanges
	// (DefaultUniverseExchanges when 0).
	Universe  int
	Exchanges int
}

// exchangesOf returns the exchanges of opts's dataset.
func exchangesOf(opts Options) []marketdata.Exchange {
	if opts.Universe > 0 {
		return UniverseExchanges(opts.exchanges())
	}
	return []marketdata.Exchange{Exchange}
}

// tickersOf returns the tickers of opts's dataset; the first opts.Symbols
// are those with bars.
func tickersOf(opts Options) []ingest.TickerRow {
	if opts.Universe > 0 {
		return UniverseTickers(opts)
	}
	return Tickers(opts.Symbols)
}

// barSymbols returns the symbols with bars of opts's dataset, whose
// tickers are tickers (tickersOf), in the order of their series.
func barSymbols(opts Options, tickers []ingest.TickerRow) []string {
	if opts.Universe <= 0 {
		return Symbols(opts.Symbols)
	}
	out := make([]string, min(opts.Symbols, len(tickers)))
	for i := range out {
		out[i] = tickers[i].Symbol
	}
	return out
}

// Symbol returns the symbol of the i-th synthetic ticker (0-based).
func Symbol(i int) string { return fmt.Sprintf("SYN%06d", i+1) }

// Tickers returns the synthetic tickers.
func Tickers(n int) []ingest.TickerRow {
	out := make([]ingest.TickerRow, n)
	for i := range out {
		out[i] = ingest.TickerRow{Symbol: Symbol(i), Name: fmt.Sprintf("Synthetic Company %06d", i+1),
			AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: Exchange.MIC}
	}
	return out
}

// Symbols returns the synthetic symbols.
func Symbols(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Symbol(i)
	}
	return out
}

// TradingDays returns the weekdays of the years before end (inclusive).
func TradingDays(years int, end time.Time) []time.Time {
	if end.IsZero() {
		end = DefaultEnd
	}
	start := end.AddDate(-years, 0, 1)
	var out []time.Time
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			out = append(out, d)
		}
	}
	return out
}

func cents(x float64) float64 { return math.Round(x*100) / 100 }

// Series returns the bars of symbol i over days, with their corporate
// actions and adjustment factors.
func Series(seed uint64, i int, days []time.Time) []ingest.BarRow {
	return series(seed, i, Symbol(i), days)
}

// series is Series under the name sym: the prices of series i are the same
// whatever its symbol is called.
func series(seed uint64, i int, sym string, days []time.Time) []ingest.BarRow {
	r := rand.New(rand.NewPCG(seed, uint64(i)+1))
	price := 10 + r.Float64()*490
	sigma := 0.01 + r.Float64()*0.02
	drift := 0.0002 + r.Float64()*0.0004
	baseVolume := math.Exp(12 + r.Float64()*4) // ~160k .. ~9M shares a day
	payer := r.IntN(3) == 0
	yield := 0.01 + r.Float64()*0.03
	divEvery := 63 // trading days in a quarter
	divPhase := r.IntN(divEvery)

	bars := make([]ingest.BarRow, len(days))
	closes := make([]float64, len(days))
	var events []adjust.Event
	pendingSplit := 0.0
	for d, date := range days {
		b := ingest.BarRow{Symbol: sym, Date: date}
		prev := price
		if pendingSplit != 0 {
			b.SplitFactor = pendingSplit
			prev /= pendingSplit
			pendingSplit = 0
		}
		if payer && d > 0 && d%divEvery == divPhase {
			b.Dividend = cents(prev * yield / 4)
			if b.Dividend > 0 && b.Dividend < prev {
				prev -= b.Dividend
			} else {
				b.Dividend = 0
			}
		}
		open := prev * math.Exp(r.NormFloat64()*sigma*0.3)
		closePx := open * math.Exp(drift+r.NormFloat64()*sigma)
		b.Open, b.Close = cents(open), cents(closePx)
		b.Open, b.Close = max(b.Open, 0.01), max(b.Close, 0.01)
		b.High = cents(max(b.Open, b.Close) * (1 + math.Abs(r.NormFloat64())*sigma*0.5))
		b.Low = cents(min(b.Open, b.Close) * (1 - math.Min(0.5, math.Abs(r.NormFloat64())*sigma*0.5)))
		b.Low = max(min(b.Low, b.Open, b.Close), 0.01)
		b.High = max(b.High, b.Open, b.Close)
		b.Volume = math.Max(1, math.Round(baseVolume*math.Exp(r.NormFloat64()*0.4)))
		price = b.Close
		switch {
		case price > 1000:
			pendingSplit = float64(2 + 2*r.IntN(2)) // 2:1 or 4:1 next day
		case price < 1:
			pendingSplit = 0.1 // 1:10 reverse split
		}
		if b.SplitFactor != 0 || b.Dividend != 0 {
			events = append(events, adjust.Event{Date: date, SplitFactor: b.SplitFactor, Dividend: b.Dividend})
		}
		closes[d] = b.Close
		bars[d] = b
	}
	pf, vf := adjust.Factors(days, closes, events)
	for d := range bars {
		bars[d].PriceFactor, bars[d].VolumeFactor = pf[d], vf[d]
	}
	return bars
}

// Source streams the bars of all symbols, symbol by symbol, generating
// each series on demand; it implements ingest.BarSource.
type Source struct {
	opts    Options
	days    []time.Time
	symbols []string
	sym     int
	buf     []ingest.BarRow
	pos     int
}

// NewSource returns a stream over the whole dataset.
func NewSource(opts Options) *Source {
	return newSource(opts, barSymbols(opts, tickersOf(opts)))
}

// newSource streams the series of symbols, the dataset's barSymbols.
func newSource(opts Options, symbols []string) *Source {
	return &Source{opts: opts, days: TradingDays(opts.Years, opts.End), symbols: symbols, sym: -1}
}

// Next advances to the next bar.
func (s *Source) Next() bool {
	for s.pos+1 >= len(s.buf) {
		if s.sym+1 >= len(s.symbols) {
			return false
		}
		s.sym++
		s.buf, s.pos = series(s.opts.Seed, s.sym, s.symbols[s.sym], s.days), -1
	}
	s.pos++
	return true
}

// Bar returns the current bar.
func (s *Source) Bar() ingest.BarRow { return s.buf[s.pos] }

// Err returns nil: generation cannot fail.
func (s *Source) Err() error { return nil }

// Load returns the load that replaces the synthetic dataset of opts.
func Load(opts Options) ingest.Load {
	tickers := tickersOf(opts)
	symbols := barSymbols(opts, tickers)
	return ingest.Load{
		Exchanges:      exchangesOf(opts),
		Tickers:        tickers,
		ReplaceSymbols: symbols,
		FactorsGiven:   true,
		Bars:           func() (ingest.BarSource, error) { return newSource(opts, symbols), nil },
	}
}
