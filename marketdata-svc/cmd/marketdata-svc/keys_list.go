package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// keysList prints every key as a table, by account and creation time.
func keysList(l keysLine) (keysAction, error) {
	if len(l.args) > 0 {
		return nil, fmt.Errorf("keys list: unexpected argument %q\n%s", l.args[0], keysUsage)
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		list, err := store.ListKeys(ctx)
		if err != nil {
			return err
		}
		return printKeys(l.stdout, list)
	}, nil
}

// printKeys writes list as a table. Text from the database is printed
// through auth.Printable: a name stored before names were checked, with a
// newline or an escape sequence in it, shows quoted instead of breaking or
// forging rows.
func printKeys(stdout io.Writer, list []marketdatadb.KeyMeta) error {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tACCOUNT\tHINT\tSCOPES\tRATE/S\tMONTHLY\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, k := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", auth.Printable(k.ID), auth.Printable(k.Account), auth.Printable(k.Hint),
			auth.Printable(strings.Join(k.Scopes, ",")), limitText(int64(k.RatePerSecond)), limitText(k.MonthlyQuota),
			timeText(k.CreatedAt), timeText(k.ExpiresAt), timeText(k.RevokedAt), timeText(k.LastUsedAt))
	}
	return w.Flush()
}
