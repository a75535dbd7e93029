package notesdb

import (
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Scopes a notes key can hold.
const (
	ScopeRead  = "notes:read"
	ScopeWrite = "notes:write"
)

// maxIDLen bounds an id: they are "acct_" or "key_" and 26 characters.
const maxIDLen = 64

// KeyConfig is what pkg/keystore, which keeps the accounts and keys,
// knows of notes-svc's: the key prefix, the scopes (both by default), and
// ids that are a prefix and letters or digits, made by notes.NewPrefixedID.
func KeyConfig() keystore.Config {
	return keystore.Config{
		Prefix:        auth.NotesPrefix,
		Scopes:        []string{ScopeRead, ScopeWrite},
		DefaultScopes: []string{ScopeRead, ScopeWrite},
		NewAccountID:  func() (string, error) { return notes.NewPrefixedID("acct_") },
		NewKeyID:      func() (string, error) { return notes.NewPrefixedID("key_") },
		ValidID:       validID,
		IDForm:        "key_ and letters or digits",
		Translate:     translate,
	}
}

// validID accepts what could be an id: ASCII letters, digits and
// underscores, up to maxIDLen, so that no other bytes (a newline, bytes
// that are not UTF-8, which PostgreSQL would refuse with its own error)
// reach the database or the output.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for _, c := range []byte(id) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
