package notesdb_test

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/keystore/keystoretest"
)

// TestKeyStore runs pkg/keystore's test on the notes schema (text ids,
// acct_ and key_).
func TestKeyStore(t *testing.T) {
	keystoretest.Run(t, func(t *testing.T) *keystore.Store {
		store, err := notesdb.New(testenv.DB(t))
		if err != nil {
			t.Fatal(err)
		}
		return store.Store
	}, "key_01HZY3K5J8W9Q2R4T6V8X0Z2B4")
}
