package ingest

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ChangesKept is how many versions' changes the loads keep.
const ChangesKept = changesKept

// CopyRowsForTest streams rows into table (of eod_bars' raw columns) as a
// load does, for the benchmark beside pgx's CopyFrom.
func CopyRowsForTest(ctx context.Context, tx pgx.Tx, table string, rows []BarRow) (int64, error) {
	src, _ := Bars(rows)()
	return copyRows(ctx, tx, table, newCopySource(src, rawColumns))
}
