package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// keysList is `notes-svc keys list`.
func keysList(ctx context.Context, store *notesdb.Store, args []string, stdout io.Writer) error {
	fs := newKeysFlagSet("list")
	account := fs.String("account", "", "only this account")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return fmt.Errorf("keys list: bad arguments\n%s", usage)
	}
	list, err := store.ListKeys(ctx, *account)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tACCOUNT\tHINT\tSCOPES\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, k := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountName, k.Hint, strings.Join(k.Scopes, ","),
			k.CreatedAt.UTC().Format(time.RFC3339), when(k.ExpiresAt), when(k.RevokedAt), when(k.LastUsedAt))
	}
	return tw.Flush()
}
