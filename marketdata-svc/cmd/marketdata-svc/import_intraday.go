package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
)

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
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	for _, path := range paths {
		res, err := importer.ImportIntradayFile(ctx, store, path, iopts)
		if err != nil {
			return fmt.Errorf("import %s: nothing applied:\n%w", path, err)
		}
		fmt.Fprintf(stdout, "%s: %d intraday rows in %s (%.0f rows/s); %d minutes changed, version %d\n", path, res.Rows,
			res.Elapsed.Round(time.Millisecond), res.RowsPerSecond(), res.Load.BarsChanged, res.Load.Version)
		if err := publish(ctx, cfg, log, res.Load.Version); err != nil {
			return err
		}
	}
	return nil
}
