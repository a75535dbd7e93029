package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// maxKeyIDLen bounds a KEY_ID argument: ids are "key_" and 26 characters.
const maxKeyIDLen = 64

// keysRevoke is `notes-svc keys revoke`. Replicas keep accepting the key
// until their cache entry expires, which the output says.
func keysRevoke(k keysCall) (keysAction, error) {
	if len(k.args) != 1 {
		return nil, fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", usage)
	}
	id := k.args[0]
	if !validKeyID(id) {
		return nil, fmt.Errorf("keys revoke: %s is not a key id (key_ and letters or digits, as keys list shows)", strconv.Quote(id))
	}
	return func(ctx context.Context, store *notesdb.Store) error {
		if err := store.RevokeKey(ctx, id, time.Now()); err != nil {
			return fmt.Errorf("keys revoke %s: %w", id, err)
		}
		fmt.Fprintf(k.stdout, "revoked %s; replicas that cached it stop accepting it within NOTES_KEY_CACHE_TTL (%s)\n", id, k.cfg.KeyCacheTTL)
		return nil
	}, nil
}

// validKeyID accepts what could be a key id: ASCII letters, digits and
// underscores, up to maxKeyIDLen, so that no other bytes (a newline, bytes
// that are not UTF-8, which PostgreSQL would refuse with its own error)
// reach the database or the output.
func validKeyID(id string) bool {
	if id == "" || len(id) > maxKeyIDLen {
		return false
	}
	for _, c := range []byte(id) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
