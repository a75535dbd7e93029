package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// A load records, with the version it bumps, what it changed in the EOD
// bars served (eod_changes): per symbol, the earliest date whose values
// changed. The caches keep a page across the version when no change of
// its symbols reaches its dates. Each step of the load notes its changes
// in the temporary table load_changes as it makes them, on the server
// and as groups of symbols (a date and an array), so that a day of 50,000
// symbols is neither sent back and forth nor stored a row per symbol; a
// date of '-infinity' is every date of the symbol. A symbol noted twice
// (a bar of the day and a split) is merged by the reader, which keeps its
// earliest date: merging here would cost a sort of every symbol of the
// day, a third of the load's time.

// changesKept is how many versions back eod_changes keeps: a cache
// carries pages over a few versions at most, and a day of a whole
// universe is a row or two per version, so the table stays small.
const changesKept = 32

// stageChanges creates load_changes for the load's steps to note their
// changes in.
func stageChanges(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS load_changes (from_date date NOT NULL, symbols text[] NOT NULL) ON COMMIT DROP"); err != nil {
		return fmt.Errorf("stage changes: %w", marketdatadb.Translate(err))
	}
	return nil
}

// noteEveryDate notes that every date of symbols changed: their bars were
// replaced, or their splits or dividends changed, which changes the
// adjusted values of all their earlier bars.
func noteEveryDate(ctx context.Context, tx pgx.Tx, symbols []string) error {
	if len(symbols) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, "INSERT INTO load_changes VALUES ('-infinity', $1)", symbols); err != nil {
		return fmt.Errorf("note changes: %w", marketdatadb.Translate(err))
	}
	return nil
}

// noteCopied notes the bars copied straight into eod_bars, every one of
// them new: each symbol of load_symbols (the bars' symbols alone when it
// is called) changed from the earliest date of the copy on. That is the
// symbol's own first date for a day of bars, and earlier than it (never
// later) when the copy spans symbols of different first dates.
func noteCopied(ctx context.Context, tx pgx.Tx, from time.Time) error {
	if _, err := tx.Exec(ctx, "INSERT INTO load_changes SELECT $1, array_agg(symbol) FROM load_symbols HAVING count(*) > 0", from); err != nil {
		return fmt.Errorf("note changes: %w", marketdatadb.Translate(err))
	}
	return nil
}

// noteFrom notes that each symbol changed from its date on (the bars
// whose factors were recomputed).
func noteFrom(ctx context.Context, tx pgx.Tx, symbols []string, from []time.Time) error {
	if len(symbols) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO load_changes SELECT d, array_agg(s) FROM unnest($1::text[], $2::date[]) AS u(s, d) GROUP BY d`,
		symbols, from); err != nil {
		return fmt.Errorf("note changes: %w", marketdatadb.Translate(err))
	}
	return nil
}

// recordChanges writes the changes noted as version's and prunes the
// versions no cache reads any more. A load that noted nothing records
// nothing, which reads as "anything may have changed".
func recordChanges(ctx context.Context, tx pgx.Tx, version int64) error {
	if _, err := tx.Exec(ctx, "INSERT INTO eod_changes (version, from_date, symbols) SELECT $1, from_date, symbols FROM load_changes", version); err != nil {
		return fmt.Errorf("record changes: %w", marketdatadb.Translate(err))
	}
	if _, err := tx.Exec(ctx, "DELETE FROM eod_changes WHERE version <= $1", version-changesKept); err != nil {
		return fmt.Errorf("prune changes: %w", marketdatadb.Translate(err))
	}
	return nil
}
