package main

import (
	"context"
	"fmt"
	"time"
)

// keysRevoke is `notes-svc keys revoke`. Replicas keep accepting the key
// until their cache entry expires, which the output says.
func keysRevoke(ctx context.Context, k keysCall) error {
	if len(k.args) != 1 {
		return fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", usage)
	}
	if err := k.store.RevokeKey(ctx, k.args[0], time.Now()); err != nil {
		return fmt.Errorf("keys revoke %s: %w", k.args[0], err)
	}
	fmt.Fprintf(k.stdout, "revoked %s; replicas that cached it stop accepting it within NOTES_KEY_CACHE_TTL (%s)\n", k.args[0], k.cfg.KeyCacheTTL)
	return nil
}
