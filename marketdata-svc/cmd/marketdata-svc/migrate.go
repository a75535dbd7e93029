package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// migrate applies the embedded migrations and logs the schema version.
func migrate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))
	}
	store, err := marketdatadb.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	current, latest, err := marketdatadb.MigrationStatus(ctx, store.DB())
	if err != nil {
		return err
	}
	log.Info("migrated", "schema_version", current, "latest", latest)
	return nil
}
