package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// Store returns a store on a fresh database (Postgres), closed when the
// test ends.
func Store(t testing.TB) *marketdatadb.Store {
	t.Helper()
	return StoreAt(t, Postgres(t))
}

// StoreAt returns a store on the database at url, closed when the test
// ends, for a test that also reaches that database another way.
func StoreAt(t testing.TB, url string) *marketdatadb.Store {
	t.Helper()
	s, err := marketdatadb.Open(context.Background(), config.Config{DatabaseURL: url,
		StatementTimeout: 10 * time.Second, DBMaxOpenConns: 4, DBMaxIdleConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
