package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/delivery"
)

// migrateCommand is `notes-svc migrate`.
func migrateCommand(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("migrate takes no arguments\n%s", usage)
	}
	return migrate(ctx, cfg, stdout)
}

func migrate(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	log := newLogger(cfg, stdout)
	// One connection, so that the session settings below hold for every
	// statement of the migrations.
	cfg.DBMaxOpenConns = 1
	db, err := openDB(cfg, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	// Migrations may rewrite big tables: no statement timeout here, and a
	// lock timeout instead, so one stuck behind a lock fails clearly.
	if _, err := db.ExecContext(ctx, "SET statement_timeout = 0; SET lock_timeout = '60s'"); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := notesdb.Migrate(ctx, db.DB, log); err != nil {
		return err
	}
	// River's tables (the webhook queue) after the service's own, under
	// River's versioning.
	return delivery.Migrate(ctx, db.DB, log)
}
