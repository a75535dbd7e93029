package testenv

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
)

// Stores are the stores of one test database, as the service opens them
// on its primary: the database itself (pool, keys, usage counters, data
// version, migrations), its reads and its ingest.
type Stores struct {
	*marketdatadb.Store
	Reads  *reads.Store
	Ingest *ingest.Store
}

// Config is the configuration tests open the database at url with: small
// pools and a statement timeout that a loaded machine does not reach.
func Config(url string) config.Config {
	return config.Config{DatabaseURL: url, StatementTimeout: 10 * time.Second,
		DBMaxOpenConns: 4, DBMaxIdleConns: 4, DBConnMaxLifetime: time.Minute, DBConnMaxIdleTime: time.Minute}
}

// Store returns the stores of a fresh database (Postgres), closed when the
// test ends.
func Store(t testing.TB) *Stores {
	t.Helper()
	return StoreAt(t, Postgres(t))
}

// StoreAt returns the stores of the database at url, closed when the test
// ends, for a test that also reaches that database another way.
func StoreAt(t testing.TB, url string) *Stores {
	t.Helper()
	return StoreWith(t, Config(url))
}

// StoreWith returns the stores of the database cfg names, opened with
// cfg's pool and timeouts, closed when the test ends.
func StoreWith(t testing.TB, cfg config.Config) *Stores {
	t.Helper()
	s, err := marketdatadb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Stores{Store: s, Reads: reads.New(s.DB()), Ingest: ingest.New(s.DB())}
}

// HoldLocks opens another session on url, closed when t ends, and begins
// a transaction there that runs stmt: it holds stmt's locks until the test
// ends the transaction, as a concurrent client would.
func HoldLocks(t testing.TB, url, stmt string) (*sql.DB, *sql.Tx) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(stmt); err != nil {
		t.Fatal(err)
	}
	return db, tx
}
