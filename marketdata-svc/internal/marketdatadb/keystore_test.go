package marketdatadb_test

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/keystore/keystoretest"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestKeyStore runs pkg/keystore's test on the market-data schema (uuid
// ids, per-key limits).
func TestKeyStore(t *testing.T) {
	keystoretest.Run(t, func(t *testing.T) *keystore.Store { return testenv.Store(t).Store.Store }, "7d9f4b8e-4a7e-4c3b-9a51-2f6a1f0f6e11")
}
