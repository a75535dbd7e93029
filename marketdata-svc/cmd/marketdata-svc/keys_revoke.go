package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysRevoke revokes the key named by the one argument.
func keysRevoke(l keysLine) (keysAction, error) {
	if len(l.args) != 1 {
		return nil, fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", keysUsage)
	}
	if _, err := uuid.Parse(l.args[0]); err != nil {
		return nil, fmt.Errorf("keys revoke: %s is not a key id (a UUID, as keys list shows)", strconv.Quote(l.args[0]))
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		if err := store.RevokeKey(ctx, l.args[0]); err != nil {
			return err
		}
		fmt.Fprintln(l.stdout, "revoked key", l.args[0])
		return nil
	}, nil
}
