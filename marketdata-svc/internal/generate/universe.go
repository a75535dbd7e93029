package generate

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// A universe (Options.Universe above 0) lists tickers the way a data
// vendor's whole catalogue does, in place of the SYNnnnnnn tickers: many
// exchanges of very different sizes, symbols of one to five letters and
// company names made of common words, so that searching by a symbol's
// first letters or by a word of a name finds a realistic share of them.
// Only the first Options.Symbols tickers have bars; a vendor lists far more
// tickers than it has end-of-day series for.
//
// It stays recognisably synthetic: every exchange is named "Synthetic
// Exchange NN (generated data)" with a MIC SYNNN that no real venue uses.

// DefaultUniverseExchanges is how many exchanges a universe lists its
// tickers on unless Options.Exchanges says otherwise.
const DefaultUniverseExchanges = 70

// universeStream is the PCG stream of the universe's tickers; Series uses
// stream i+1 for symbol i, so no symbol's prices share it.
const universeStream = 0

// UniverseExchanges returns the n exchanges of a universe, largest first.
func UniverseExchanges(n int) []marketdata.Exchange {
	out := make([]marketdata.Exchange, n)
	for i := range out {
		code := fmt.Sprintf("SYN%02d", i+1)
		out[i] = marketdata.Exchange{MIC: code, Name: fmt.Sprintf("Synthetic Exchange %02d (generated data)", i+1),
			Acronym: code, Timezone: "UTC", Currency: "USD"}
	}
	return out
}

// ExchangeShare returns the share of a universe's tickers that exchange i
// (0-based) of n lists: proportional to 1/(i+1), as listings concentrate
// on a few large venues (with 70 exchanges the largest lists a fifth of
// the tickers and the smallest 0.3%).
func ExchangeShare(i, n int) float64 {
	var h float64
	for k := 1; k <= n; k++ {
		h += 1 / float64(k)
	}
	return 1 / float64(i+1) / h
}

// symbolLengths are the weights of one- to five-letter symbols.
var symbolLengths = []float64{0.002, 0.02, 0.25, 0.5, 0.228}

// UniverseTickers returns the tickers of opts's universe: opts.Universe of
// them, in a fixed order that depends only on opts.Seed and the number of
// exchanges, so that a larger universe only adds tickers at the end.
func UniverseTickers(opts Options) []ingest.TickerRow {
	exchanges := UniverseExchanges(opts.exchanges())
	cum := make([]float64, len(exchanges))
	acc := 0.0
	for i := range cum {
		acc += ExchangeShare(i, len(exchanges))
		cum[i] = acc
	}
	r := rand.New(rand.NewPCG(opts.Seed, universeStream))
	used := make(map[string]bool, opts.Universe)
	out := make([]ingest.TickerRow, opts.Universe)
	for i := range out {
		name := companyName(r)
		sym := uniqueSymbol(r, used)
		x := min(sort.SearchFloat64s(cum, r.Float64()*acc), len(cum)-1)
		out[i] = ingest.TickerRow{Symbol: sym, Name: name, AssetType: "Stock", PriceCurrency: exchanges[x].Currency,
			ExchangeMIC: exchanges[x].MIC}
	}
	return out
}

// uniqueSymbol draws a symbol of weighted length that used does not hold
// yet, and adds it. After three collisions at one length it tries a longer
// one, so the short names, which run out first, never stall the draw.
func uniqueSymbol(r *rand.Rand, used map[string]bool) string {
	n := 1
	for u := r.Float64(); n < len(symbolLengths) && u >= symbolLengths[n-1]; n++ {
		u -= symbolLengths[n-1]
	}
	buf := make([]byte, 0, marketdata.MaxSymbolLen)
	for tries := 0; ; tries++ {
		if tries > 0 && tries%3 == 0 && n < marketdata.MaxSymbolLen {
			n++
		}
		buf = buf[:0]
		for range n {
			buf = append(buf, byte('A'+r.IntN(26)))
		}
		if s := string(buf); !used[s] {
			used[s] = true
			return s
		}
	}
}

// companyName draws a name such as "Harbor Alder Copper Holdings": one or
// two words of a root list, an industry and a legal suffix.
func companyName(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(nameRoots[r.IntN(len(nameRoots))])
	if r.IntN(10) < 3 {
		b.WriteString(" " + nameRoots[r.IntN(len(nameRoots))])
	}
	b.WriteString(" " + nameIndustries[r.IntN(len(nameIndustries))])
	b.WriteString(" " + nameSuffixes[r.IntN(len(nameSuffixes))])
	return b.String()
}

// NameWords are the words universe names are made of, for a searcher
// that wants words that occur.
func NameWords() []string {
	return append(append(append([]string(nil), nameRoots...), nameIndustries...), nameSuffixes...)
}

var nameRoots = strings.Fields(`Acacia Acorn Adler Aegis Alder Alpine Amber Anchor Apex Arbor Arcadia Argent Ash Aspen Atlas Aurora
Avalon Badger Basin Bay Beacon Bear Bellwether Birch Bison Blackwater Bluebird Bluff Boulder Bramble Brook Cairn
Canyon Cardinal Cascade Cedar Centennial Chestnut Cinder Clover Cobalt Comet Compass Condor Copperhead Coral
Cove Crane Crescent Crest Crown Cypress Delta Dune Eagle Echo Elm Ember Emerald Evergreen Falcon Fern Fjord Flint
Forge Fox Frontier Garnet Glacier Granite Grove Gulf Halcyon Harbor Harvest Hawk Heath Heron Highland Hickory
Horizon Indigo Iris Iron Ivy Jade Juniper Keystone Kestrel Lake Lark Laurel Ledger Lighthouse Linden Lynx Magnolia
Maple Marble Meadow Meridian Mesa Midland Monarch Moss Navigator Nimbus North Oak Obsidian Onyx Orchard Orion
Osprey Pacific Palisade Pebble Pine Pinnacle Pioneer Plains Polar Prairie Quarry Quartz Raven Redwood Ridge River
Rowan Sable Saffron Sage Sequoia Sierra Silver Slate Sparrow Spruce Summit Sun Sycamore Tamarack Thistle Tide Timber
Topaz Tundra Valley Vanguard Vega Vista Walnut Willow Wren Yarrow Zenith Zephyr`)

var nameIndustries = strings.Fields(`Aerospace Agriculture Airlines Apparel Automotive Banking Biotech Brewing Cement Chemicals Coal
Communications Construction Copper Data Diagnostics Energy Engineering Entertainment Foods Freight Gaming Gold
Health Hotels Insurance Logistics Lumber Machinery Media Medical Metals Mining Networks Oil Paper Pharma Pipelines
Power Railways Realty Retail Robotics Semiconductors Shipping Software Solar Steel Telecom Textiles Timberlands Tools
Utilities Water Wind`)

var nameSuffixes = strings.Fields(`Corp Inc Holdings Group Ltd Co Partners Industries Trust Systems Technologies Resources`)

// exchanges is the number of exchanges of opts's universe.
func (o Options) exchanges() int {
	if o.Exchanges > 0 {
		return o.Exchanges
	}
	return DefaultUniverseExchanges
}
