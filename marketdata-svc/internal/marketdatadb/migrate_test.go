package marketdatadb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestConcurrentMigrations reproduces an outside audit's finding: migrate took no lock, so two
// runs on a fresh database failed in 2 of 15 rounds (duplicate key in
// pg_extension_name_index). migrate, keys, import, demo and generate all
// migrate, so concurrent runs are the class: each round starts six at once
// on a fresh database, through Store.Migrate as every subcommand does.
func TestConcurrentMigrations(t *testing.T) {
	const rounds, runners = 8, 6
	for round := range rounds {
		url := testenv.EmptyPostgres(t)
		stores := make([]*testenv.Stores, runners)
		for i := range stores {
			stores[i] = testenv.StoreAt(t, url)
		}
		errs := make([]error, runners)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				<-start
				errs[i] = s.Migrate(context.Background())
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, runner %d: %v", round+1, i+1, err)
			}
		}
		current, latest, err := marketdatadb.MigrationStatus(context.Background(), stores[0].DB())
		if err != nil || current != latest {
			t.Fatalf("round %d: schema at %d of %d (%v)", round+1, current, latest, err)
		}
	}
}

// TestMigrationOutlastsStatementTimeout: a migration that waits on a lock
// longer than the service's statement timeout must not be cancelled by it
// (it was, after 5 s); migrations run with no statement timeout and a lock
// timeout instead. Another session holds an uncommitted CREATE TABLE of a
// table the first migration creates for three statement timeouts.
func TestMigrationOutlastsStatementTimeout(t *testing.T) {
	url := testenv.EmptyPostgres(t)
	cfg := testenv.Config(url)
	cfg.StatementTimeout = 200 * time.Millisecond
	s := testenv.StoreWith(t, cfg)
	_, tx := testenv.HoldLocks(t, url, "CREATE TABLE exchanges (held int)")
	released := make(chan struct{})
	go func() {
		time.Sleep(3 * cfg.StatementTimeout)
		_ = tx.Rollback()
		close(released)
	}()
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("a migration waiting on a lock was cancelled: %v", err)
	}
	<-released
	current, latest, err := marketdatadb.MigrationStatus(context.Background(), s.DB())
	if err != nil || current != latest {
		t.Fatalf("schema at %d of %d (%v)", current, latest, err)
	}
}

// TestMigrationRenamesXetra: a store that listed Xetra under its ISO MIC
// (XETR) before the marketstack-compatibility migration lists it, and its
// tickers, under marketstack's XETRA after it, and caches see a new data
// version.
func TestMigrationRenamesXetra(t *testing.T) {
	ctx := context.Background()
	url := testenv.EmptyPostgres(t)
	s := testenv.StoreAt(t, url)
	if err := marketdatadb.MigrateUpTo(ctx, s.DB(), 1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO exchanges (mic, name, acronym, timezone, currency) VALUES ('XETR', 'Deutsche Börse Xetra', 'XETRA', 'Europe/Berlin', 'EUR')`,
		`INSERT INTO tickers (symbol, name, exchange_mic) VALUES ('SAP.XETRA', 'SAP SE', 'XETR')`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := s.Reads.Exchange(ctx, "XETRA")
	if err != nil || x.Name != "Deutsche Börse Xetra" || x.Timezone != "Europe/Berlin" {
		t.Fatalf("XETRA after the migration: %+v, %v", x, err)
	}
	if _, err := s.Reads.Exchange(ctx, "XETR"); err == nil {
		t.Errorf("XETR is still stored")
	}
	tk, err := s.Reads.Ticker(ctx, "SAP.XETRA")
	if err != nil || tk.Exchange == nil || tk.Exchange.MIC != "XETRA" || tk.Country != "" {
		t.Errorf("ticker after the migration: %+v, %v", tk, err)
	}
	if after, err := s.DataVersion(ctx); err != nil || after <= before {
		t.Errorf("data version %d -> %d (%v): cached answers of the old shape stay reachable", before, after, err)
	}
}
