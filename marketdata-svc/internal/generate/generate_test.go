package generate_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func digest(opts generate.Options) (string, int) {
	h := sha256.New()
	src := generate.NewSource(opts)
	n := 0
	for src.Next() {
		fmt.Fprintf(h, "%+v\n", src.Bar())
		n++
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

func TestSameSeedSameRows(t *testing.T) {
	opts := generate.Options{Symbols: 20, Years: 2, Seed: 7}
	a, n := digest(opts)
	b, _ := digest(opts)
	if a != b {
		t.Fatal("the same seed generated different rows")
	}
	if want := 20 * len(generate.TradingDays(2, generate.DefaultEnd)); n != want || n < 20*500 {
		t.Fatalf("%d rows, want %d", n, want)
	}
	opts.Seed = 8
	if c, _ := digest(opts); c == a {
		t.Fatal("another seed generated the same rows")
	}
	// A symbol's series does not depend on how many symbols are generated.
	days := generate.TradingDays(2, generate.DefaultEnd)
	if !slices.Equal(generate.Series(7, 3, days), generate.Series(7, 3, days)) {
		t.Fatal("series not reproducible")
	}
}

func TestGeneratedDataIsPlausible(t *testing.T) {
	src := generate.NewSource(generate.Options{Symbols: 60, Years: 10, Seed: 1})
	var splits, divs, n int
	for src.Next() {
		b := src.Bar()
		n++
		if b.High < max(b.Open, b.Close) || b.Low > min(b.Open, b.Close) || b.Low <= 0 || b.Volume <= 0 {
			t.Fatalf("implausible bar: %+v", b)
		}
		if b.PriceFactor <= 0 || b.VolumeFactor <= 0 {
			t.Fatalf("bad factors: %+v", b)
		}
		if b.SplitFactor != 0 {
			splits++
		}
		if b.Dividend != 0 {
			divs++
			if b.Dividend >= b.Close {
				t.Fatalf("dividend above the price: %+v", b)
			}
		}
	}
	if splits == 0 || divs == 0 {
		t.Fatalf("%d bars with %d splits and %d dividends: want some of each", n, splits, divs)
	}
}

// Loading generated data with the generator's factors gives the same
// adjusted values as letting the store compute them; the CSV output
// imports to the same data.
func TestGeneratedFactorsMatchTheStore(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	// Seed 3 gives some symbols with splits and dividends over 8 years.
	opts := generate.Options{Symbols: 8, Years: 8, Seed: 3}
	if _, err := s.Ingest.Apply(ctx, generate.Load(opts)); err != nil {
		t.Fatal(err)
	}
	query := marketdata.EODQuery{Symbols: generate.Symbols(opts.Symbols)}
	given, err := s.Reads.EOD(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := s.Reads.Splits(ctx, marketdata.ActionQuery{})
	dv, _ := s.Reads.Dividends(ctx, marketdata.ActionQuery{})
	if sp.Total == 0 || dv.Total == 0 {
		t.Fatalf("want splits and dividends in the sample, got %d and %d", sp.Total, dv.Total)
	}
	// Loading the same again changes nothing but re-inserts; then the store
	// recomputes the factors itself.
	l := generate.Load(opts)
	l.FactorsGiven = false
	res, err := s.Ingest.Apply(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	computed, err := s.Reads.EOD(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if res.BarsAdjusted == 0 || !slices.Equal(given.Bars, computed.Bars) {
		t.Fatalf("store-computed adjustments differ from the generator's (%d bars re-adjusted)", res.BarsAdjusted)
	}
	// The CSV files import to the same bars (into a fresh database).
	dir := t.TempDir()
	n, err := generate.WriteCSV(dir, opts)
	if err != nil || n != int64(len(given.Bars)) {
		t.Fatalf("write csv: %d rows, %v", n, err)
	}
	s2 := testenv.Store(t)
	for _, f := range generate.Files {
		if _, err := importer.ImportFile(ctx, s2.Ingest, filepath.Join(dir, f), importer.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	imported, err := s2.Reads.EOD(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(given.Bars, imported.Bars) {
		t.Fatal("imported CSV differs from the direct load")
	}
	if _, err := os.Stat(filepath.Join(dir, "prices.csv")); err != nil {
		t.Fatal(err)
	}
}
