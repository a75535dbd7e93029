package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// keysList is `notes-svc keys list`.
func keysList(ctx context.Context, k keysCall) error {
	fs := newKeysFlagSet("list")
	account := fs.String("account", "", "only this account")
	if err := fs.Parse(k.args); err != nil || fs.NArg() > 0 {
		return fmt.Errorf("keys list: bad arguments\n%s", usage)
	}
	list, err := k.store.ListKeys(ctx, *account)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(k.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tACCOUNT\tHINT\tSCOPES\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
	for _, key := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", key.ID, key.AccountName, key.Hint, strings.Join(key.Scopes, ","),
			key.CreatedAt.UTC().Format(time.RFC3339), when(key.ExpiresAt), when(key.RevokedAt), when(key.LastUsedAt))
	}
	return tw.Flush()
}
