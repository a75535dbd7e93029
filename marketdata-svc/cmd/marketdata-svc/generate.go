package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	generator "github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
)

const generateUsage = `usage: marketdata-svc generate --symbols N --years Y [--universe T [--exchanges E]] [--seed S] [--end YYYY-MM-DD] [--out DIR]
       marketdata-svc generate --intraday (--tickers SYM,SYM | --symbols N) [--days D] [--seed S]`

// generate makes the deterministic synthetic dataset: straight into the
// database with COPY (replacing an earlier generated set of the same
// symbols), or as CSV files in --out.
func generate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if isIntradayGenerate(args) {
		return generateIntraday(ctx, cfg, log, args, stdout)
	}
	fs := newFlagSet("generate", stdout)
	symbols := fs.Int("symbols", 0, "number of synthetic symbols (SYN000001...)")
	years := fs.Int("years", 10, "years of trading days per symbol")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same data")
	end := fs.String("end", generator.DefaultEnd.Format(time.DateOnly), "last trading day")
	out := fs.String("out", "", "write CSV files to this directory instead of loading the database")
	universe := fs.Int("universe", 0, "list this many tickers with searchable names on --exchanges exchanges (the first --symbols of them with bars) instead of SYN000001...")
	exchanges := fs.Int("exchanges", generator.DefaultUniverseExchanges, "exchanges of the --universe tickers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *symbols < 1 || *years < 1 || fs.NArg() > 0 || *universe < 0 || (*universe > 0 && (*universe < *symbols || *exchanges < 1)) {
		return errors.New(generateUsage)
	}
	endDay, err := time.Parse(time.DateOnly, *end)
	if err != nil {
		return fmt.Errorf("generate: --end: %w", err)
	}
	opts := generator.Options{Symbols: *symbols, Years: *years, Seed: *seed, End: endDay, Universe: *universe, Exchanges: *exchanges}
	start := time.Now()
	if *out != "" {
		n, err := generator.WriteCSV(*out, opts)
		if err != nil {
			return err
		}
		el := time.Since(start)
		fmt.Fprintf(stdout, "generate: wrote %d price rows of %d symbols to %s in %s (%.0f rows/s); import with:\n  marketdata-svc import",
			n, *symbols, *out, el.Round(time.Millisecond), float64(n)/el.Seconds())
		for _, f := range generator.Files {
			fmt.Fprintf(stdout, " %s", filepath.Join(*out, f))
		}
		fmt.Fprintln(stdout)
		return nil
	}
	load, closeStore, err := openLoader(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := load.Apply(ctx, generator.Load(opts))
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	loaded := time.Since(start)
	of := fmt.Sprintf("%d synthetic symbols", *symbols)
	if *universe > 0 {
		of = fmt.Sprintf("%d symbols of a universe of %d tickers on %d exchanges", *symbols, *universe, *exchanges)
	}
	fmt.Fprintf(stdout, "generate: loaded %d bars of %s in %s (%.0f rows/s); %s\n", res.BarsRead, of,
		loaded.Round(time.Millisecond), float64(res.BarsRead)/loaded.Seconds(), changeText(res))
	if err := publish(ctx, cfg, log, res.Version); err != nil {
		return err
	}
	vstart := time.Now()
	if err := load.Vacuum(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "generate: vacuum analyze in %s\n", time.Since(vstart).Round(time.Millisecond))
	return nil
}
