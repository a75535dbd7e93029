package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// keysCreate is `notes-svc keys create`. The plaintext key is the last
// line of output, so that scripts can take it with tail -n 1.
func keysCreate(ctx context.Context, k keysCall) error {
	fs := newKeysFlagSet("create")
	account := fs.String("account", "", "account name (created if new)")
	scopes := fs.String("scopes", strings.Join(notesdb.DefaultScopes, ","), "comma-separated scopes")
	expiresIn := fs.Duration("expires-in", 0, "lifetime of the key; 0 never expires")
	if err := fs.Parse(k.args); err != nil {
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
	key, plain, err := k.store.CreateKey(ctx, *account, scopeList, expiresAt)
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
}
