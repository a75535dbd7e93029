package marketdatadb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// textArray scans a PostgreSQL text[] into dst with pgx's own array
// decoding: database/sql hands arrays over in their text form, which only
// pgx knows how to parse (quoting, escapes, NULLs).
func textArray(dst *[]string) sql.Scanner { return pgtype.NewMap().SQLScanner(dst) }

// LoadUsage returns the durable copy of keyIDs' usage counters in month
// (YYYY-MM), or of every key's when keyIDs is nil; a key without a copy
// is absent. It fits ratelimit.UsageStore.
func (s *Store) LoadUsage(ctx context.Context, month string, keyIDs []string) (map[string]int64, error) {
	first, err := time.Parse("2006-01", month)
	if err != nil {
		return nil, fmt.Errorf("load usage: %w", err)
	}
	// Two arrays in one row: both aggregates read the rows in one order.
	var ids []string
	var counts []int64
	err = s.db.QueryRowContext(ctx, `
SELECT coalesce(array_agg(key_id), '{}'), coalesce(array_agg(used), '{}') FROM key_usage
WHERE month = $1 AND ($2::text[] IS NULL OR key_id = ANY($2::text[]))`, first, keyIDs).
		Scan(textArray(&ids), pgtype.NewMap().SQLScanner(&counts))
	if err != nil {
		return nil, fmt.Errorf("load usage: %w", Translate(err))
	}
	used := make(map[string]int64, len(ids))
	for i, id := range ids {
		used[id] = counts[i]
	}
	return used, nil
}

// SaveUsage raises the durable copy of each key's counter in month
// (YYYY-MM) to used, in one statement. A copy is never lowered: a replica
// that reads a counter Redis has just lost must not erase the month's
// count. It fits ratelimit.UsageStore.
func (s *Store) SaveUsage(ctx context.Context, month string, used map[string]int64) error {
	if len(used) == 0 {
		return nil
	}
	first, err := time.Parse("2006-01", month)
	if err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	ids := make([]string, 0, len(used))
	counts := make([]int64, 0, len(used))
	for id, n := range used {
		ids = append(ids, id)
		counts = append(counts, max(n, 0))
	}
	_, err = s.db.ExecContext(ctx, `
INSERT INTO key_usage (key_id, month, used)
SELECT u.id, $1, u.used FROM unnest($2::text[], $3::bigint[]) AS u(id, used)
ON CONFLICT (key_id, month) DO UPDATE SET used = GREATEST(key_usage.used, EXCLUDED.used)`, first, ids, counts)
	if err != nil {
		return fmt.Errorf("save usage: %w", Translate(err))
	}
	return nil
}
