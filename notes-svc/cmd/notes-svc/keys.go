package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// keysCommand is `notes-svc keys`: it opens the store and hands it to the
// subcommand.
func keysCommand(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys needs a subcommand: create, list or revoke\n%s", usage)
	}
	sub, args := args[0], args[1:]
	store, db, err := openStore(cfg, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	switch sub {
	case "create":
		return keysCreate(ctx, store, args, stdout)
	case "list":
		return keysList(ctx, store, args, stdout)
	case "revoke":
		return keysRevoke(ctx, store, cfg, args, stdout)
	}
	return fmt.Errorf("unknown keys subcommand %q\n%s", sub, usage)
}

// keysCreate is `notes-svc keys create`. The plaintext key is the last
// line of output, so that scripts can take it with tail -n 1.
func keysCreate(ctx context.Context, store *notesdb.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	account := fs.String("account", "", "account name (created if new)")
	scopes := fs.String("scopes", strings.Join(notesdb.DefaultScopes, ","), "comma-separated scopes")
	expiresIn := fs.Duration("expires-in", 0, "lifetime of the key; 0 never expires")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("keys create: %w\n%s", err, usage)
	}
	if *account == "" || fs.NArg() > 0 {
		return fmt.Errorf("keys create: --account NAME is required and nothing else\n%s", usage)
	}
	var scopeList []string
	for s := range strings.SplitSeq(*scopes, ",") {
		s = strings.TrimSpace(s)
		if s != notesdb.ScopeRead && s != notesdb.ScopeWrite {
			return fmt.Errorf("keys create: unknown scope %q (want %s or %s)", s, notesdb.ScopeRead, notesdb.ScopeWrite)
		}
		scopeList = append(scopeList, s)
	}
	var expiresAt time.Time
	if *expiresIn < 0 {
		return errors.New("keys create: --expires-in must not be negative")
	}
	if *expiresIn > 0 {
		expiresAt = time.Now().Add(*expiresIn)
	}
	k, plain, err := store.CreateKey(ctx, *account, scopeList, expiresAt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "account: %s (%s)\nkey id: %s\nscopes: %s\n", *account, k.AccountID, k.ID, strings.Join(k.Scopes, ","))
	if k.ExpiresAt != nil {
		fmt.Fprintf(stdout, "expires: %s\n", k.ExpiresAt.Format(time.RFC3339))
	}
	fmt.Fprintln(stdout, "The key is shown once, on the next line. Store it now.")
	fmt.Fprintln(stdout, plain)
	return nil
}

// keysList is `notes-svc keys list`.
func keysList(ctx context.Context, store *notesdb.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keys list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
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

// keysRevoke is `notes-svc keys revoke`. Replicas keep accepting the key
// until their cache entry expires, which the output says.
func keysRevoke(ctx context.Context, store *notesdb.Store, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", usage)
	}
	if err := store.RevokeKey(ctx, args[0], time.Now()); err != nil {
		return fmt.Errorf("keys revoke %s: %w", args[0], err)
	}
	fmt.Fprintf(stdout, "revoked %s; replicas that cached it stop accepting it within NOTES_KEY_CACHE_TTL (%s)\n", args[0], cfg.KeyCacheTTL)
	return nil
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
