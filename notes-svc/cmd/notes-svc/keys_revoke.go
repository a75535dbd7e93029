package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

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
