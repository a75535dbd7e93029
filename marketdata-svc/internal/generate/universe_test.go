package generate_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// A universe is the same for the same seed, only grows at its end with
// more tickers, and holds valid, distinct symbols on its own exchanges.
func TestUniverseIsDeterministicAndValid(t *testing.T) {
	opts := generate.Options{Symbols: 10, Years: 1, Seed: 5, Universe: 20_000, Exchanges: 70}
	a, b := generate.UniverseTickers(opts), generate.UniverseTickers(opts)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave another universe")
	}
	smaller := opts
	smaller.Universe = 5_000
	if !slices.Equal(generate.UniverseTickers(smaller), a[:5_000]) {
		t.Fatal("a smaller universe is not the start of the larger one")
	}
	other := opts
	other.Seed = 6
	if slices.Equal(generate.UniverseTickers(other)[:100], a[:100]) {
		t.Fatal("another seed gave the same tickers")
	}
	mics := map[string]bool{}
	for _, x := range generate.UniverseExchanges(70) {
		if _, err := marketdata.ParseMIC(x.MIC); err != nil || !strings.Contains(x.Name, "generated data") {
			t.Fatalf("exchange %+v: %v", x, err)
		}
		mics[x.MIC] = true
	}
	seen := map[string]bool{}
	perExchange := map[string]int{}
	lengths := map[int]int{}
	for _, tk := range a {
		if s, err := marketdata.NormaliseSymbol(tk.Symbol); err != nil || s != tk.Symbol {
			t.Fatalf("symbol %q: %v", tk.Symbol, err)
		}
		if seen[tk.Symbol] {
			t.Fatalf("symbol %q twice", tk.Symbol)
		}
		seen[tk.Symbol] = true
		if !mics[tk.ExchangeMIC] || len(strings.Fields(tk.Name)) < 3 {
			t.Fatalf("ticker %+v", tk)
		}
		perExchange[tk.ExchangeMIC]++
		lengths[len(tk.Symbol)]++
	}
	// Listings concentrate as ExchangeShare says: about a fifth on the
	// largest, every exchange some.
	if got, want := float64(perExchange["SYN01"])/float64(len(a)), generate.ExchangeShare(0, 70); got < want*0.9 || got > want*1.1 {
		t.Fatalf("SYN01 lists %.3f of the tickers, want about %.3f", got, want)
	}
	if len(perExchange) != 70 || perExchange["SYN01"] < 10*perExchange["SYN70"] {
		t.Fatalf("listings per exchange: %v", perExchange)
	}
	if lengths[3] < len(a)/10 || lengths[4] < len(a)/3 {
		t.Fatalf("symbol lengths %v: want mostly 3 and 4 letters", lengths)
	}
}

// The first tickers of a universe carry the series the SYN symbols of the
// same index would, under their own names; the others have no bars.
func TestUniverseBarsFollowTheFirstTickers(t *testing.T) {
	opts := generate.Options{Symbols: 3, Years: 1, Seed: 5, Universe: 50}
	tickers := generate.UniverseTickers(opts)
	days := generate.TradingDays(1, generate.DefaultEnd)
	src := generate.NewSource(opts)
	for i := range opts.Symbols {
		want := generate.Series(opts.Seed, i, days)
		for d := range want {
			if !src.Next() {
				t.Fatalf("stream ended at symbol %d day %d", i, d)
			}
			got := src.Bar()
			w := want[d]
			w.Symbol = tickers[i].Symbol
			if got != w {
				t.Fatalf("symbol %d day %d: %+v, want %+v", i, d, got, w)
			}
		}
	}
	if src.Next() {
		t.Fatal("bars beyond --symbols")
	}
	l := generate.Load(opts)
	if len(l.Tickers) != 50 || len(l.Exchanges) != generate.DefaultUniverseExchanges || len(l.ReplaceSymbols) != 3 || l.ReplaceSymbols[2] != tickers[2].Symbol {
		t.Fatalf("load: %d tickers, %d exchanges, replaces %v", len(l.Tickers), len(l.Exchanges), l.ReplaceSymbols)
	}
}

// Names are made of the listed words, so a searcher can draw words that
// occur.
func TestUniverseNamesUseNameWords(t *testing.T) {
	words := map[string]bool{}
	for _, w := range generate.NameWords() {
		words[w] = true
	}
	for _, tk := range generate.UniverseTickers(generate.Options{Seed: 1, Universe: 500}) {
		for _, w := range strings.Fields(tk.Name) {
			if !words[w] {
				t.Fatalf("name %q has %q, not a listed word", tk.Name, w)
			}
		}
	}
}

// A universe loads through the store: its exchanges and tickers listed,
// only the first tickers with bars, names searchable by a word.
func TestUniverseLoads(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	opts := generate.Options{Symbols: 4, Years: 1, Seed: 5, Universe: 300, Exchanges: 6}
	if _, err := s.Ingest.Apply(ctx, generate.Load(opts)); err != nil {
		t.Fatal(err)
	}
	tickers := generate.UniverseTickers(opts)
	all, err := s.Reads.Tickers(ctx, marketdata.TickerQuery{})
	if err != nil || all.Total != 300 {
		t.Fatalf("%d tickers listed, want 300 (%v)", all.Total, err)
	}
	withBars := 0
	for _, tk := range all.Tickers {
		if tk.HasEOD {
			withBars++
		}
	}
	if withBars != 4 {
		t.Fatalf("%d tickers with bars, want 4", withBars)
	}
	first := tickers[0]
	page, err := s.Reads.EOD(ctx, marketdata.EODQuery{Symbols: []string{first.Symbol}, Limit: 1})
	if err != nil || len(page.Bars) != 1 || page.Bars[0].Exchange != first.ExchangeMIC {
		t.Fatalf("eod of %s: %+v, %v", first.Symbol, page, err)
	}
	word := strings.Fields(first.Name)[0]
	found, err := s.Reads.Tickers(ctx, marketdata.TickerQuery{Search: word})
	if err != nil || found.Total == 0 || !slices.ContainsFunc(found.Tickers, func(x marketdata.Ticker) bool { return x.Symbol == first.Symbol }) {
		t.Fatalf("search %q: %d found, %v", word, found.Total, err)
	}
}
