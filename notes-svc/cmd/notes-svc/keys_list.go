package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// keysList is `notes-svc keys list`. Text from the database is printed
// through auth.Printable: a name stored before names were checked, with a
// newline or an escape sequence in it, shows quoted instead of breaking or
// forging rows.
func keysList(k keysCall) (keysAction, error) {
	fs := newKeysFlagSet("list")
	account := fs.String("account", "", "only this account")
	if err := fs.Parse(k.args); err != nil {
		return nil, fmt.Errorf("keys list: %w\n%s", err, usage)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("keys list: unexpected argument %q\n%s", fs.Arg(0), usage)
	}
	if *account != "" {
		if err := auth.CheckAccountName(*account); err != nil {
			return nil, fmt.Errorf("keys list: --account: %w", err)
		}
	}
	return func(ctx context.Context, store *notesdb.Store) error {
		list, err := store.ListKeys(ctx, *account)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(k.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY ID\tACCOUNT\tHINT\tSCOPES\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
		for _, key := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", auth.Printable(key.ID), auth.Printable(key.AccountName), auth.Printable(key.Hint),
				auth.Printable(strings.Join(key.Scopes, ",")), key.CreatedAt.UTC().Format(time.RFC3339), when(key.ExpiresAt), when(key.RevokedAt), when(key.LastUsedAt))
		}
		return tw.Flush()
	}, nil
}
