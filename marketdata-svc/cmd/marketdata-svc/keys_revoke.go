package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysRevoke revokes the key named by the one argument.
func keysRevoke(fs *flag.FlagSet, stdout io.Writer) (keysAction, error) {
	if fs.NArg() != 1 {
		return nil, errors.New(keysUsage)
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		if err := store.RevokeKey(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "revoked key", fs.Arg(0))
		return nil
	}, nil
}
