package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	demodata "github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	generator "github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

const importUsage = `usage: marketdata-svc import [--kind prices|tickers|exchanges|splits|dividends] [--symbol SYM] [--exchange MIC] FILE [FILE ...]`

// importData imports CSV files, one transaction per file, stopping at the
// first file that fails (it applies nothing).
func importData(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stdout)
	kind := fs.String("kind", "", "kind of file (default: detected from the header): "+strings.Join(importer.Kinds, ", "))
	symbol := fs.String("symbol", "", "symbol of every row (overrides a symbol column)")
	exchange := fs.String("exchange", "", "listing exchange MIC of tickers created without one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New(importUsage)
	}
	if *kind != "" && !slices.Contains(importer.Kinds, *kind) {
		return fmt.Errorf("import: unknown --kind %q\n%s", *kind, importUsage)
	}
	opts := importer.Options{Kind: *kind, Symbol: *symbol, Exchange: strings.ToUpper(*exchange)}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	for _, path := range fs.Args() {
		res, err := importer.ImportFile(ctx, store, path, opts)
		if err != nil {
			return fmt.Errorf("import %s: nothing applied:\n%w", path, err)
		}
		fmt.Fprintf(stdout, "%s: %d %s rows%s in %s (%.0f rows/s); %s\n", path, res.Rows, res.Kind,
			layoutText(res), res.Elapsed.Round(1e6), res.RowsPerSecond(), changeText(res.Load))
		if err := publish(ctx, cfg, log, res.Load.Version); err != nil {
			return err
		}
	}
	return nil
}

func openMigrated(ctx context.Context, cfg config.Config) (*marketdatadb.Store, error) {
	store, err := marketdatadb.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

func layoutText(r importer.FileResult) string {
	s := ""
	if r.Layout != "" {
		s = " (" + r.Layout + " layout)"
	}
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d empty rows skipped", r.Skipped)
	}
	return s
}

func changeText(r marketdatadb.LoadResult) string {
	if !r.Changed() {
		return "no changes"
	}
	return fmt.Sprintf("%d bars, %d tickers, %d exchanges, %d symbols' actions changed, %d bars re-adjusted; data version %d",
		r.BarsChanged, r.TickersChanged, r.ExchangesChanged, r.ActionsChanged, r.BarsAdjusted, r.Version)
}

// publish stores a new data version in Redis, after the commit, so that
// caches drop entries built from older data. A failure is an error: the
// data is committed, but caches could serve the old data until their TTL.
func publish(ctx context.Context, cfg config.Config, log *slog.Logger, version int64) error {
	if version == 0 || cfg.RedisURL == "" {
		return nil
	}
	held, err := publishVersion(ctx, cfg.RedisURL, version)
	if err != nil {
		return fmt.Errorf("data committed (version %d) but not announced to caches: %w", version, err)
	}
	log.Info("data version published", "version", version, "redis_version", held)
	return nil
}

// publishVersion announces version on the Redis at redisURL and returns
// the version Redis holds afterwards.
func publishVersion(ctx context.Context, redisURL string, version int64) (int64, error) {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return 0, errors.New("publish data version: invalid redis url")
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	return dataversion.Publish(ctx, rdb, version)
}

// demo loads the bundled demo dataset in one transaction; running it again
// changes nothing.
func demo(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	start := time.Now()
	res, err := demodata.Load(ctx, store)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: %d bars of GOOG, MSFT, GSPC.INDX, %d exchanges, %d tickers read in %s; %s\n",
		res.BarsRead, len(demodata.Exchanges), len(demodata.Tickers), time.Since(start).Round(time.Millisecond), changeText(res))
	return publish(ctx, cfg, log, res.Version)
}

const generateUsage = `usage: marketdata-svc generate --symbols N --years Y [--seed S] [--end YYYY-MM-DD] [--out DIR]`

// generate makes the deterministic synthetic dataset: straight into the
// database with COPY (replacing an earlier generated set of the same
// symbols), or as CSV files in --out.
func generate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stdout)
	symbols := fs.Int("symbols", 0, "number of synthetic symbols (SYN000001...)")
	years := fs.Int("years", 10, "years of trading days per symbol")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same data")
	end := fs.String("end", generator.DefaultEnd.Format(time.DateOnly), "last trading day")
	out := fs.String("out", "", "write CSV files to this directory instead of loading the database")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *symbols < 1 || *years < 1 || fs.NArg() > 0 {
		return errors.New(generateUsage)
	}
	endDay, err := time.Parse(time.DateOnly, *end)
	if err != nil {
		return fmt.Errorf("generate: --end: %w", err)
	}
	opts := generator.Options{Symbols: *symbols, Years: *years, Seed: *seed, End: endDay}
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
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := store.Apply(ctx, generator.Load(opts))
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	loaded := time.Since(start)
	fmt.Fprintf(stdout, "generate: loaded %d bars of %d synthetic symbols in %s (%.0f rows/s); %s\n", res.BarsRead, *symbols,
		loaded.Round(time.Millisecond), float64(res.BarsRead)/loaded.Seconds(), changeText(res))
	if err := publish(ctx, cfg, log, res.Version); err != nil {
		return err
	}
	vstart := time.Now()
	if err := store.Vacuum(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "generate: vacuum analyze in %s\n", time.Since(vstart).Round(time.Millisecond))
	return nil
}
