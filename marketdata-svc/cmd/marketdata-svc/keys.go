package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/pkg/keyscli"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// keys is `marketdata-svc keys`, pkg/keyscli's command on the market-data
// database: the same subcommands, flags and output as notes-svc's, with
// the per-key limits (--rate-per-second, --monthly-quota). It migrates
// the database first, as every command that writes data does.
func keys(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	return keyscli.Run(ctx, keyscli.Options{
		Command:  "marketdata-svc keys",
		Keys:     marketdatadb.KeyConfig(),
		Limits:   true,
		CacheTTL: fmt.Sprintf("MARKETDATA_KEY_CACHE_TTL (%s)", cfg.KeyCacheTTL),
		Open: func(ctx context.Context) (*keystore.Store, func(), error) {
			store, err := openMigrated(ctx, cfg)
			if err != nil {
				return nil, nil, err
			}
			return store.Store, func() { _ = store.Close() }, nil
		},
	}, args, stdout)
}
