package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

const usage = `usage: notes-svc [command]

commands:
  serve                         serve the API (the default)
  migrate                       apply pending database migrations
  keys create --account NAME    issue an API key; the key is the last line of output
         [--name TEXT] [--scopes notes:read,notes:write] [--expires-in DURATION]
  keys list [--account NAME]    list keys (never their secrets)
  keys revoke KEY_ID            revoke a key
  healthcheck                   exit 0 when the server on NOTES_HTTP_ADDR is ready
  version, --version            print the version

configuration comes from NOTES_* environment variables (see README.md)`

// run is the whole program; main only adds signals and the exit code.
// Each subcommand lives in a file of its name.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return cmdmain.Service[config.Config]{
		Name: "notes-svc", Version: version, Usage: usage, Default: "serve", Load: config.Load,
		Commands: map[string]func(context.Context, config.Config, []string) error{
			"serve": func(ctx context.Context, cfg config.Config, args []string) error {
				return serveCommand(ctx, cfg, args, getenv, stdout)
			},
			"migrate": func(ctx context.Context, cfg config.Config, args []string) error {
				return migrateCommand(ctx, cfg, args, stdout)
			},
			"keys": func(ctx context.Context, cfg config.Config, args []string) error {
				return keysCommand(ctx, cfg, args, stdout)
			},
			"healthcheck": func(ctx context.Context, cfg config.Config, _ []string) error {
				return healthcheck.Check(ctx, cfg.HTTPAddr, stdout)
			},
		},
	}.Run(ctx, args, getenv, stdout)
}

func newLogger(cfg config.Config, stdout io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

// openStore opens the pool and the store on it; the caller closes the
// pool, which the store does not own.
func openStore(cfg config.Config, tracer pgx.QueryTracer) (*notesdb.Store, *postgres.Pool, error) {
	db, err := openDB(cfg, tracer)
	if err != nil {
		return nil, nil, err
	}
	store, err := notesdb.New(db)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	// Events carry the note in the form the API answers with.
	store.SetEventObject(httpapi.NoteObject)
	return store, db, nil
}

// openDB opens the pool; tracer (pkg/tracing's, or nil) sees its
// statements.
func openDB(cfg config.Config, tracer pgx.QueryTracer) (*postgres.Pool, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	return notesdb.Open(cfg.DatabaseURL, notesdb.PoolOptions{
		MaxOpenConns:     cfg.DBMaxOpenConns,
		ConnMaxLifetime:  cfg.DBConnMaxLifetime,
		ConnMaxIdleTime:  cfg.DBConnMaxIdleTime,
		StatementTimeout: cfg.DBStatementTimeout,
		Tracer:           tracer,
	})
}
