package marketdatadb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// EODChanges returns what the data versions after from, up to to, changed
// in the EOD bars served (eod_changes, which each load writes with the
// version it bumps), merged: each symbol at its earliest date. It returns
// nil, changes unknown, when one of those versions recorded none (an
// import of tickers, intraday bars or reference data, or a version pruned
// since), when the database has not reached to yet, or when the changes
// name more than limit symbols. One statement reads them with the
// database's version, in one snapshot.
func (s *Store) EODChanges(ctx context.Context, from, to int64, limit int) (marketdata.EODChanges, error) {
	if from >= to {
		return nil, fmt.Errorf("eod changes: empty range (%d, %d]", from, to)
	}
	rows, err := s.db.QueryContext(ctx, `
SELECT d.version, c.version, nullif(c.from_date, '-infinity'), c.symbols
FROM data_version AS d LEFT JOIN eod_changes AS c ON c.version > $1 AND c.version <= $2`, from, to)
	if err != nil {
		return nil, fmt.Errorf("eod changes: %w", Translate(err))
	}
	defer rows.Close()
	changes := marketdata.EODChanges{}
	versions := map[int64]bool{}
	for rows.Next() {
		var current int64
		var version sql.NullInt64
		var date sql.NullTime
		var symbols []string
		if err := rows.Scan(&current, &version, &date, textArray(&symbols)); err != nil {
			return nil, fmt.Errorf("eod changes: %w", Translate(err))
		}
		if current < to {
			return nil, nil
		}
		if !version.Valid {
			continue // no version of the range recorded changes
		}
		versions[version.Int64] = true
		var day time.Time // zero: every date
		if date.Valid {
			day = date.Time
		}
		for _, sym := range symbols {
			if prev, ok := changes[sym]; !ok || (!prev.IsZero() && (day.IsZero() || day.Before(prev))) {
				changes[sym] = day
			}
		}
		if len(changes) > limit {
			return nil, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("eod changes: %w", Translate(err))
	}
	if int64(len(versions)) != to-from {
		return nil, nil
	}
	return changes, nil
}
