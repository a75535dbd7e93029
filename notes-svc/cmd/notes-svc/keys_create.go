package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// keysCreate is `notes-svc keys create`. The plaintext key is the last
// line of output, so that scripts can take it with tail -n 1.
func keysCreate(k keysCall) (keysAction, error) {
	fs := newKeysFlagSet("create")
	account := fs.String("account", "", "account name (created if new)")
	scopes := fs.String("scopes", strings.Join(notesdb.DefaultScopes, ","), "comma-separated scopes")
	expiresIn := fs.Duration("expires-in", 0, "lifetime of the key; 0 never expires")
	if err := fs.Parse(k.args); err != nil {
		return nil, fmt.Errorf("keys create: %w\n%s", err, usage)
	}
	if *account == "" {
		return nil, fmt.Errorf("keys create: --account NAME is required\n%s", usage)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("keys create: unexpected argument %q\n%s", fs.Arg(0), usage)
	}
	if err := auth.CheckAccountName(*account); err != nil {
		return nil, fmt.Errorf("keys create: --account: %w", err)
	}
	scopeList, err := auth.ParseScopes(*scopes, []string{notesdb.ScopeRead, notesdb.ScopeWrite})
	if err != nil {
		return nil, fmt.Errorf("keys create: --scopes: %w", err)
	}
	if err := auth.CheckKeyLifetime(*expiresIn); err != nil {
		return nil, fmt.Errorf("keys create: --expires-in %w", err)
	}
	return func(ctx context.Context, store *notesdb.Store) error {
		var expiresAt time.Time
		if *expiresIn > 0 {
			expiresAt = time.Now().Add(*expiresIn)
		}
		key, plain, err := store.CreateKey(ctx, *account, scopeList, expiresAt)
		if err != nil {
			return err
		}
		fmt.Fprintf(k.stdout, "account: %s (%s)\nkey id: %s\nscopes: %s\n", *account, key.AccountID, key.ID, strings.Join(key.Scopes, ","))
		if key.ExpiresAt != nil {
			fmt.Fprintf(k.stdout, "expires: %s\n", key.ExpiresAt.Format(time.RFC3339))
		}
		fmt.Fprintln(k.stdout, "The key is shown once, on the next line. Store it now.")
		fmt.Fprintln(k.stdout, plain)
		return nil
	}, nil
}
