package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/edgar"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// syncEDGAR fetches each company's SEC documents and loads them, one
// transaction per company (a company fetched is kept if a later one
// fails), then publishes the data version once.
func syncEDGAR(ctx context.Context, cfg config.Config, log *slog.Logger, ciks []string, stdout io.Writer) error {
	src, load, closeStore, err := openSync(ctx, cfg, func() (*edgar.Source, error) { return edgar.New(cfg.Sync, log) })
	if err != nil {
		return err
	}
	defer closeStore()
	var version int64
	defer func() {
		if version != 0 {
			if err := publish(ctx, cfg, log, version); err != nil {
				log.Error("edgar: publish", "err", err)
			}
		}
	}()
	for _, cik := range ciks {
		cik = strings.TrimSpace(cik)
		docs, err := src.Company(ctx, cik)
		if err != nil {
			return fmt.Errorf("sync edgar %s: %w", cik, err)
		}
		res, err := load.ApplyDatasets(ctx, ingest.DatasetLoad{EDGAR: docs})
		if err != nil {
			return fmt.Errorf("sync edgar %s: %w", cik, err)
		}
		if res.Version != 0 {
			version = res.Version
		}
		fmt.Fprintf(stdout, "edgar %s: %s, %d documents, %d changed\n", docs[0].CIK, docs[0].Name, len(docs), res.Changed)
	}
	return nil
}

// openSync makes a sync command's source with newSource, then opens the
// store it loads into (openLoader): a source that cannot be made opens
// nothing.
func openSync[S any](ctx context.Context, cfg config.Config, newSource func() (S, error)) (src S, load *ingest.Store, closeStore func(), err error) {
	if src, err = newSource(); err != nil {
		return src, nil, nil, fmt.Errorf("sync: %w", err)
	}
	load, closeStore, err = openLoader(ctx, cfg)
	return src, load, closeStore, err
}
