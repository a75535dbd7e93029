// Package ingest is the write side of marketdata-svc's database: the bulk
// loads that import, sync, the demo and the generator share. A load of
// daily bars, tickers, exchanges, splits and dividends (Apply) or of
// 1-minute bars (ApplyIntraday) is one transaction at COPY speed that
// recomputes the adjustment factors it touches and bumps the data version
// when anything changed; sync keeps its progress and runs beside them.
//
// Bars reach COPY as its binary format built here (copyStream), not
// through pgx's CopyFrom, which puts each value in an interface and
// encodes it through its type map. BenchmarkCopyBars, 50,000 bars into an
// empty table of eod_bars' shape on the project's 2-core machine under
// load: the same wall time, the server's (160–230 ms), but 11–14 ms of the
// client's CPU, 69 allocations and 4.6 MB, against pgx's 38–41 ms, 450,000
// allocations and 11 MB: CPU the parsing of a provider's answer needs on
// the same two cores (make bench's sync_universe_day, reproduced by
// feed/registry's BenchmarkEODHDUniverseDayVsCopy).
package ingest

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// Store loads data into one database, the primary. It is safe for
// concurrent use: loads of one symbol are ordered by its lock.
type Store struct {
	db *sql.DB
}

// New returns the ingest on db, the primary's pool of marketdatadb.Open.
func New(db *sql.DB) *Store { return &Store{db: db} }

// Vacuum runs VACUUM (ANALYZE) on the data tables after a bulk load, so that
// the planner has statistics and counts can use index-only scans. It is not
// bound by the statement timeout.
func (s *Store) Vacuum(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("vacuum: %w", marketdatadb.Translate(err))
	}
	defer conn.Close()
	for _, q := range []string{
		"SET statement_timeout = 0",
		"VACUUM (ANALYZE) eod_bars, splits, dividends, tickers",
		"RESET statement_timeout",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("vacuum: %w", marketdatadb.Translate(err))
		}
	}
	return nil
}
