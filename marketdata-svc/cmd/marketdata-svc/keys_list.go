package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysList prints every key as a table, by account and creation time.
func keysList(l keysLine) (keysAction, error) {
	if len(l.args) > 0 {
		return nil, errors.New(keysUsage)
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		list, err := store.ListKeys(ctx)
		if err != nil {
			return err
		}
		return printKeys(l.stdout, list)
	}, nil
}

// printKeys writes list as a table.
func printKeys(stdout io.Writer, list []marketdatadb.KeyMeta) error {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tACCOUNT\tHINT\tSCOPES\tRATE/S\tMONTHLY\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, k := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Account, k.Hint,
			strings.Join(k.Scopes, ","), limitText(int64(k.RatePerSecond)), limitText(k.MonthlyQuota),
			timeText(k.CreatedAt), timeText(k.ExpiresAt), timeText(k.RevokedAt), timeText(k.LastUsedAt))
	}
	return w.Flush()
}
