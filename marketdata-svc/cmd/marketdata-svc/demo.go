package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	demodata "github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// demo loads the bundled demo dataset in one transaction; running it again
// changes nothing.
func demo(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := newFlagSet("demo", stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	start := time.Now()
	res, err := demodata.Load(ctx, ingest.New(store.DB()))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: %d bars of GOOG, MSFT, GSPC.INDX, %d exchanges, %d tickers, %d v2 dataset samples read in %s; %s\n",
		res.BarsRead, len(demodata.Exchanges), len(demodata.Tickers), len(demodata.DatasetFiles), time.Since(start).Round(time.Millisecond), changeText(res))
	return publish(ctx, cfg, log, res.Version)
}
