package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// The scale workloads' requests are drawn here, from what one size's
// database holds, by a generator seeded with the run's seed and the
// workload's name: every run sends the same requests, and each list holds
// distinct ones, so that none is answered by the cache that an earlier
// one filled.

// scaleInputs is what the requests are drawn from.
type scaleInputs struct {
	Symbols   []string        // tickers with bars
	Tickers   []tickerName    // every ticker
	Exchanges []exchangeCount // largest first
	Days      []time.Time     // trading days from the first bar to the last
}

type tickerName struct{ Symbol, Name string }

type exchangeCount struct {
	MIC     string
	Tickers int
}

// weekdays lists the weekdays from first to last, both included: the
// generator's trading days.
func weekdays(first, last time.Time) []time.Time {
	var out []time.Time
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			out = append(out, d)
		}
	}
	return out
}

// scaleRand is the generator of the requests named name (workload and
// size).
func scaleRand(seed int, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64())) // #nosec G115 -- a non-negative seed
}

// distinct draws requests until it has n different ones, in the order
// they first came, or until 20n draws have not found that many (a small
// space of requests): the list is then shorter.
func distinct(n int, draw func() string) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for tries := 0; len(out) < n && tries < 20*n; tries++ {
		if q := draw(); !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// pick returns k different elements of from (all of them if it holds
// fewer), in the order drawn.
func pick(r *rand.Rand, from []string, k int) []string {
	if k >= len(from) {
		k = len(from)
	}
	chosen := make(map[int]bool, k)
	out := make([]string, 0, k)
	for len(out) < k {
		if i := r.IntN(len(from)); !chosen[i] {
			chosen[i] = true
			out = append(out, from[i])
		}
	}
	return out
}

const day = time.DateOnly

// eodRangeRequest is scale_eod_range's request: 1 to 5 symbols and a
// 1-year window that ends by the last bar.
func eodRangeRequest(r *rand.Rand, in scaleInputs) string {
	syms := pick(r, in.Symbols, 1+r.IntN(5))
	last := in.Days[len(in.Days)-1]
	n := len(in.Days)
	for n > 1 && in.Days[n-1].AddDate(1, 0, -1).After(last) {
		n--
	}
	from := in.Days[r.IntN(n)]
	return "/v1/eod?symbols=" + strings.Join(syms, ",") + "&date_from=" + from.Format(day) + "&date_to=" + from.AddDate(1, 0, -1).Format(day) + "&limit=100"
}

// eodLatestRequest is scale_eod_latest's: 100 symbols' latest bars.
func eodLatestRequest(r *rand.Rand, in scaleInputs) string {
	return "/v1/eod/latest?symbols=" + strings.Join(pick(r, in.Symbols, 100), ",") + "&limit=100"
}

// eodDateRequest is scale_eod_date's: 100 symbols on one trading day.
func eodDateRequest(r *rand.Rand, in scaleInputs) string {
	d := in.Days[r.IntN(len(in.Days))]
	return "/v1/eod/" + d.Format(day) + "?symbols=" + strings.Join(pick(r, in.Symbols, 100), ",") + "&limit=100"
}

// searchTerm is what a user types to find a ticker: half the time the
// first three letters of a symbol, else a word of a name (not its legal
// suffix, the last word, which nobody searches for).
func searchTerm(r *rand.Rand, in scaleInputs) string {
	for {
		t := in.Tickers[r.IntN(len(in.Tickers))]
		if r.IntN(2) == 0 {
			if len(t.Symbol) >= 3 {
				return strings.ToLower(t.Symbol[:3])
			}
			continue
		}
		words := strings.Fields(t.Name)
		if len(words) < 2 {
			continue
		}
		return strings.ToLower(words[r.IntN(len(words)-1)])
	}
}

// searchRequest is scale_ticker_search's: a term and a page size of 51 to
// 100, so that there are many more distinct requests than terms.
func searchRequest(r *rand.Rand, in scaleInputs) string {
	return fmt.Sprintf("/v2/tickerslist?search=%s&limit=%d", url.QueryEscape(searchTerm(r, in)), 51+r.IntN(50))
}

// deepOffset is how deep scale_exchange_tickers pages at a size of
// tickers: 10,000 at the large size's 170,000, the same share of a
// smaller universe.
func deepOffset(tickers int) int {
	return 10_000 * tickers / scaleSizes[len(scaleSizes)-1].Tickers
}

// deepExchanges are the exchanges that list more than offset+100 tickers,
// where a page at offset is full; when none does, the largest, with the
// offset lowered to half its listings.
func deepExchanges(in scaleInputs, offset int) ([]exchangeCount, int) {
	var out []exchangeCount
	for _, x := range in.Exchanges {
		if x.Tickers > offset+100 {
			out = append(out, x)
		}
	}
	if len(out) == 0 && len(in.Exchanges) > 0 {
		return in.Exchanges[:1], in.Exchanges[0].Tickers / 2
	}
	return out, offset
}

// exchangeRequest is scale_exchange_tickers': a page of 51 to 100 tickers
// of one of exchanges, at an offset of 0 to 99, or (deep) of offset to
// offset+999 (less where the exchange ends sooner).
func exchangeRequest(r *rand.Rand, exchanges []exchangeCount, offset int, deep bool) string {
	x := exchanges[r.IntN(len(exchanges))]
	limit := 51 + r.IntN(50)
	at := r.IntN(100)
	if deep {
		span := max(1, min(1000, x.Tickers-limit-offset))
		at = offset + r.IntN(span)
	}
	return fmt.Sprintf("/v1/exchanges/%s/tickers?limit=%d&offset=%d", x.MIC, limit, at)
}

// hitRequest is a page of scale_hit, eod_hit's request at another pair of
// symbols and last day: 2 symbols, 100 bars (at least 150 trading days
// before it).
func hitRequest(r *rand.Rand, in scaleInputs) string {
	d := in.Days[min(150, len(in.Days)-1)+r.IntN(max(1, len(in.Days)-150))]
	return "/v1/eod?symbols=" + strings.Join(pick(r, in.Symbols, 2), ",") + "&date_to=" + d.Format(day) + "&limit=100"
}

// zipf draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s,
// by inverting the cumulative weights.
type zipf struct{ cum []float64 }

func newZipf(n int, s float64) zipf {
	z := zipf{cum: make([]float64, n)}
	acc := 0.0
	for k := range n {
		acc += 1 / math.Pow(float64(k+1), s)
		z.cum[k] = acc
	}
	return z
}

func (z zipf) draw(r *rand.Rand) int {
	return min(sort.SearchFloat64s(z.cum, r.Float64()*z.cum[len(z.cum)-1]), len(z.cum)-1)
}

// top is the share of draws that fall on the k most frequent ranks.
func (z zipf) top(k int) float64 {
	if k <= 0 {
		return 0
	}
	return z.cum[min(k, len(z.cum))-1] / z.cum[len(z.cum)-1]
}

// writeLines writes one line per element.
func writeLines(path string, lines []string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
