package main

import (
	"context"
	"flag"
	"io"
	"log/slog"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
	"github.com/tickerdesk/tickerdesk/pkg/flushwriter"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
)

const usage = `usage: marketdata-svc [command] [flags]

commands:
  serve      serve the HTTP API (default)
  migrate    apply database migrations
  keys       create, list or revoke API keys (keys create --account NAME)
  import     import prices, tickers, exchanges, splits, dividends or intraday bars from CSV
  sync       fetch daily bars, splits and dividends from a data provider (sync --provider NAME)
  demo       load the bundled demo dataset (idempotent)
  generate   generate a deterministic synthetic dataset (--intraday: minute bars)
  healthcheck  exit 0 when the server on MARKETDATA_HTTP_ADDR is ready
  version    print the version`

// run is the whole program: it parses args, reads the configuration through
// getenv and runs one command. Logs and command output go to stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	logger := func(cfg config.Config) *slog.Logger {
		return slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	}
	return cmdmain.Service[config.Config]{
		Name: "marketdata-svc", Version: version, Usage: usage, Default: "serve", Load: config.Load,
		Commands: map[string]func(context.Context, config.Config, []string) error{
			"serve": func(ctx context.Context, cfg config.Config, args []string) error {
				// Log lines leave in batches, not a write per request;
				// errors at once (pkg/flushwriter). The deferred Close
				// writes out the rest.
				out := flushwriter.New(stdout, flushwriter.Options{})
				defer out.Close()
				log := slog.New(out.Handler(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel})))
				return serve(ctx, cfg, log, accesslog.New(out, cfg.LogLevel), args)
			},
			"migrate": func(ctx context.Context, cfg config.Config, args []string) error {
				return migrate(ctx, cfg, logger(cfg), args)
			},
			"keys": func(ctx context.Context, cfg config.Config, args []string) error { return keys(ctx, cfg, args, stdout) },
			"import": func(ctx context.Context, cfg config.Config, args []string) error {
				return importData(ctx, cfg, logger(cfg), args, stdout)
			},
			"sync": func(ctx context.Context, cfg config.Config, args []string) error {
				return syncData(ctx, cfg, logger(cfg), args, stdout)
			},
			"demo": func(ctx context.Context, cfg config.Config, args []string) error {
				return demo(ctx, cfg, logger(cfg), args, stdout)
			},
			"generate": func(ctx context.Context, cfg config.Config, args []string) error {
				return generate(ctx, cfg, logger(cfg), args, stdout)
			},
			"healthcheck": func(ctx context.Context, cfg config.Config, _ []string) error {
				return healthcheck.Check(ctx, cfg.HTTPAddr, stdout)
			},
		},
	}.Run(ctx, args, getenv, stdout)
}

// openMigrated opens the store of record and applies pending migrations,
// as every command that writes data does first.
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

// openLoader opens the migrated store of record (openMigrated) for a
// command that loads data; closeStore closes it.
func openLoader(ctx context.Context, cfg config.Config) (load *ingest.Store, closeStore func(), err error) {
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return ingest.New(store.DB()), func() { store.Close() }, nil
}

// newFlagSet returns the flag set of the subcommand name: a bad flag is an
// error run returns, never an exit, and -h prints the flags to stdout with
// the rest of the command's output.
func newFlagSet(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	return fs
}
