package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysRevoke revokes the key named by the one argument.
func keysRevoke(l keysLine) (keysAction, error) {
	if len(l.args) != 1 {
		return nil, errors.New(keysUsage)
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		if err := store.RevokeKey(ctx, l.args[0]); err != nil {
			return err
		}
		fmt.Fprintln(l.stdout, "revoked key", l.args[0])
		return nil
	}, nil
}
