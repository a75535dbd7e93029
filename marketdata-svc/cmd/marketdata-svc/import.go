package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

const importUsage = `usage: marketdata-svc import [--kind prices|tickers|exchanges|splits|dividends|intraday|commodities|ratings|bonds|etfs|edgar] [--tz ZONE] [--symbol SYM] [--exchange MIC] FILE [FILE ...]`

// importData imports CSV files, one transaction per file, stopping at the
// first file that fails (it applies nothing).
func importData(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := newFlagSet("import", stdout)
	kind := fs.String("kind", "", "kind of file (default: detected from the header): "+strings.Join(importer.Kinds, ", ")+
		"; intraday (1-minute bars) and the v2 datasets ("+strings.Join(importer.DatasetKinds, ", ")+") are never detected")
	tz := fs.String("tz", "", "intraday: time zone of timestamps written without a UTC offset, e.g. America/New_York")
	symbol := fs.String("symbol", "", "symbol of every row (overrides a symbol column)")
	exchange := fs.String("exchange", "", "listing exchange MIC of tickers created without one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New(importUsage)
	}
	if *kind != "" && *kind != importer.KindIntraday && !slices.Contains(importer.Kinds, *kind) && !importer.IsDataset(*kind) {
		return fmt.Errorf("import: unknown --kind %q\n%s", *kind, importUsage)
	}
	if *tz != "" && *kind != importer.KindIntraday {
		return fmt.Errorf("import: --tz is for --kind intraday\n%s", importUsage)
	}
	opts := importer.Options{Kind: *kind, Symbol: *symbol, Exchange: strings.ToUpper(*exchange)}
	if *kind == importer.KindIntraday {
		return importIntraday(ctx, cfg, log, fs.Args(), *tz, opts, stdout)
	}
	if importer.IsDataset(*kind) {
		if *symbol != "" || *exchange != "" {
			return fmt.Errorf("import: --symbol and --exchange are not for --kind %s\n%s", *kind, importUsage)
		}
		return importDatasets(ctx, cfg, log, fs.Args(), *kind, stdout)
	}
	return importEach(ctx, cfg, log, fs.Args(), stdout, func(ctx context.Context, load *ingest.Store, path string) (importer.FileResult, error) {
		return importer.ImportFile(ctx, load, path, opts)
	}, func(res importer.FileResult) (string, int64) {
		return fmt.Sprintf("%d %s rows%s in %s (%.0f rows/s); %s", res.Rows, res.Kind,
			layoutText(res), res.Elapsed.Round(1e6), res.RowsPerSecond(), changeText(res.Load)), res.Load.Version
	})
}

// importEach imports each of paths with importFile, one transaction per
// file, stopping at the first that fails; after each it writes the line
// report gives and publishes the data version report names, so that the
// cached answers over what changed go with it.
func importEach[R any](ctx context.Context, cfg config.Config, log *slog.Logger, paths []string, stdout io.Writer,
	importFile func(context.Context, *ingest.Store, string) (R, error), report func(R) (line string, version int64)) error {
	load, closeStore, err := openLoader(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	for _, path := range paths {
		res, err := importFile(ctx, load, path)
		if err != nil {
			return fmt.Errorf("import %s: nothing applied:\n%w", path, err)
		}
		line, version := report(res)
		fmt.Fprintf(stdout, "%s: %s\n", path, line)
		if err := publish(ctx, cfg, log, version); err != nil {
			return err
		}
	}
	return nil
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

// importIntraday imports 1-minute bar files, one transaction per file,
// stopping at the first that fails, and publishes each new data version as
// the other imports do.
func importIntraday(ctx context.Context, cfg config.Config, log *slog.Logger, paths []string, tz string, opts importer.Options, stdout io.Writer) error {
	iopts := importer.IntradayOptions{Symbol: opts.Symbol, Exchange: opts.Exchange}
	if tz != "" {
		zone, err := time.LoadLocation(tz)
		if err != nil {
			return fmt.Errorf("import: --tz: unknown time zone %q", tz)
		}
		iopts.Zone = zone
	}
	return importEach(ctx, cfg, log, paths, stdout, func(ctx context.Context, load *ingest.Store, path string) (importer.FileResult, error) {
		return importer.ImportIntradayFile(ctx, load, path, iopts)
	}, func(res importer.FileResult) (string, int64) {
		return fmt.Sprintf("%d intraday rows in %s (%.0f rows/s); %d minutes changed, version %d", res.Rows,
			res.Elapsed.Round(time.Millisecond), res.RowsPerSecond(), res.Load.BarsChanged, res.Load.Version), res.Load.Version
	})
}

// importDatasets imports v2 dataset files of one kind, one transaction per
// file, stopping at the first that fails, and publishes each new data
// version as the other imports do: the cached answers over the dataset
// go with it.
func importDatasets(ctx context.Context, cfg config.Config, log *slog.Logger, paths []string, kind string, stdout io.Writer) error {
	return importEach(ctx, cfg, log, paths, stdout, func(ctx context.Context, load *ingest.Store, path string) (importer.DatasetFileResult, error) {
		return importer.ImportDatasetFile(ctx, load, path, kind)
	}, func(res importer.DatasetFileResult) (string, int64) {
		return fmt.Sprintf("%d %s rows in %s; %d rows changed, version %d", res.Rows, kind,
			res.Elapsed.Round(time.Millisecond), res.Load.Changed, res.Load.Version), res.Load.Version
	})
}
