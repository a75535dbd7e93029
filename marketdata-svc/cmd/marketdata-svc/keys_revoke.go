package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
)

// keysRevoke revokes the key named by the one argument.
func keysRevoke(ctx context.Context, cfg config.Config, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(keysUsage)
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.RevokeKey(ctx, fs.Arg(0)); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "revoked key", fs.Arg(0))
	return nil
}
