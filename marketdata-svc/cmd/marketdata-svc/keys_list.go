package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
)

// keysList prints every key as a table, by account and creation time.
func keysList(ctx context.Context, cfg config.Config, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	list, err := store.ListKeys(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tACCOUNT\tHINT\tSCOPES\tRATE/S\tMONTHLY\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, k := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Account, k.Hint,
			strings.Join(k.Scopes, ","), limitText(int64(k.RatePerSecond)), limitText(k.MonthlyQuota),
			timeText(k.CreatedAt), timeText(k.ExpiresAt), timeText(k.RevokedAt), timeText(k.LastUsedAt))
	}
	return w.Flush()
}
