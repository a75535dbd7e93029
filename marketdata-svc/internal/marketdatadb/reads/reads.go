// Package reads is the query side of marketdata-svc's database: the API's
// reads of end-of-day and intraday bars, tickers, exchanges, splits,
// dividends and indices, each a few fixed statements on one pool (the
// primary's or a replica's). It implements the interfaces the API consumes,
// marketdata.Store and marketdata.IntradayStore; the cache and the replica
// router (package replicas) wrap it as decorators.
package reads

import (
	"database/sql"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Store answers the API's reads on one database. It is safe for concurrent
// use.
type Store struct {
	db *sql.DB
}

// New returns the reads on db, a pool of marketdatadb.Open (or OpenReplica):
// its session timeouts bound every statement.
func New(db *sql.DB) *Store { return &Store{db: db} }

// The reads are what the API consumes.
var (
	_ marketdata.Store         = (*Store)(nil)
	_ marketdata.IntradayStore = (*Store)(nil)
)

// dateBound turns an open query bound into a concrete date far outside any
// data, so one prepared statement serves open and closed ranges.
func dateBound(t time.Time, upper bool) time.Time {
	if !t.IsZero() {
		return t
	}
	if upper {
		return time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
}
