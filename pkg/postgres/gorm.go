package postgres

import (
	"database/sql"
	"fmt"
	"time"

	gormpostgres "gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenGORM returns a GORM session over db, a pool that the caller keeps
// and closes, set up as both services need it.
func OpenGORM(db *sql.DB) (*gorm.DB, error) {
	g, err := gorm.Open(gormpostgres.New(gormpostgres.Config{Conn: db}), &gorm.Config{
		// SQL and its arguments (note content, key hashes) must never
		// reach a log.
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		// Opening must not need the database: the service starts, reports
		// not ready, and recovers when PostgreSQL comes up.
		DisableAutomaticPing: true,
		NowFunc:              func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open gorm: %w", err)
	}
	return g, nil
}
