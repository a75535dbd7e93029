package marketdatadb_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestConcurrentMigrations is issue 12, item 6: migrate took no lock, so two
// runs on a fresh database failed in 2 of 15 rounds (duplicate key in
// pg_extension_name_index). migrate, keys, import, demo and generate all
// migrate, so concurrent runs are the class: each round starts six at once
// on a fresh database, through Store.Migrate as every subcommand does.
func TestConcurrentMigrations(t *testing.T) {
	const rounds, runners = 8, 6
	for round := range rounds {
		url := testenv.EmptyPostgres(t)
		stores := make([]*marketdatadb.Store, runners)
		for i := range stores {
			s, err := marketdatadb.Open(context.Background(), testConfig(url))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stores[i] = s
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
	cfg := testConfig(url)
	cfg.StatementTimeout = 200 * time.Millisecond
	s, err := marketdatadb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	blocker, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	tx, err := blocker.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("CREATE TABLE exchanges (held int)"); err != nil {
		t.Fatal(err)
	}
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
