package marketdatadb

import (
	"github.com/google/uuid"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Scopes a market-data key can hold, one per API function.
const (
	ScopeEOD       = "eod"
	ScopeTickers   = "tickers"
	ScopeExchanges = "exchanges"
	ScopeSplits    = "splits"
	ScopeDividends = "dividends"
	// ScopeIntraday grants the intraday routes.
	ScopeIntraday = "intraday"
)

// AllScopes returns every scope, those of a key created without an
// explicit list: intraday included (so the demo key has it). Keys stored
// before intraday existed keep the scopes they were given, without it.
func AllScopes() []string {
	return []string{ScopeEOD, ScopeTickers, ScopeExchanges, ScopeSplits, ScopeDividends, ScopeIntraday}
}

// KeyConfig is what pkg/keystore, which keeps the accounts and keys,
// knows of marketdata-svc's: the key prefix, the scopes (all by default),
// and uuid ids, which the columns are.
func KeyConfig() keystore.Config {
	return keystore.Config{
		Prefix:        auth.MarketDataPrefix,
		Scopes:        AllScopes(),
		DefaultScopes: AllScopes(),
		NewAccountID:  newUUID,
		NewKeyID:      newUUID,
		ValidID:       validUUID,
		IDForm:        "a UUID",
		Translate:     Translate,
	}
}

func newUUID() (string, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// validUUID accepts a UUID in the form keys list prints and PostgreSQL
// reads, the only one a uuid column can hold.
func validUUID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil && len(id) == 36
}
