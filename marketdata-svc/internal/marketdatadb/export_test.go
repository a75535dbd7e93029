package marketdatadb

import (
	"context"
	"database/sql"
)

// MigrateUpTo applies the embedded migrations up to version, for tests of
// one migration on a database holding data of the schema before it.
func MigrateUpTo(ctx context.Context, db *sql.DB, version int64) error {
	p, err := migrationProvider(db)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}
