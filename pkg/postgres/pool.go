package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"
)

// Pool is a pgx pool with database/sql on top of it (pgx's
// stdlib.OpenDBFromPool): code that needs database/sql (GORM, goose) and
// code that reads through pgx itself share one set of connections under
// one limit. database/sql keeps no idle connection of its own: each of
// its calls takes one from the pool and gives it back.
type Pool struct {
	*sql.DB
	PGX *pgxpool.Pool
}

// OpenPool parses rawURL, applies o's session settings (as ParseConfig
// does) and o's bounds, and lets adjust change the connection settings
// last. Like Open it does not connect: the first query or Ping does.
//
// pgxpool keeps a connection until it has been idle for ConnMaxIdleTime
// or open for ConnMaxLifetime, whatever the number idle, so
// MaxIdleConns has no say here.
func OpenPool(rawURL string, o PoolOptions, adjust func(*pgxpool.Config)) (*Pool, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, ErrInvalidURL
	}
	configure(cfg.ConnConfig, o)
	if n := o.MaxOpenConns; n > 0 && n <= math.MaxInt32 {
		cfg.MaxConns = int32(n)
	}
	if o.ConnMaxLifetime > 0 {
		cfg.MaxConnLifetime = o.ConnMaxLifetime
	}
	if o.ConnMaxIdleTime > 0 {
		cfg.MaxConnIdleTime = o.ConnMaxIdleTime
	}
	if adjust != nil {
		adjust(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	return &Pool{DB: stdlib.OpenDBFromPool(pool), PGX: pool}, nil
}

// Close closes database/sql's handle, then the pool and its connections.
func (p *Pool) Close() error {
	err := p.DB.Close()
	p.PGX.Close()
	return err
}

// PoolCollector exports a pgx pool's statistics under the names client
// golang's collectors.NewDBStatsCollector gives database/sql's, with the
// same db_name label, so that a service on either kind of pool has the
// same series for its dashboards and alerts. pgxpool's counts mean the
// same: a wait is an acquire that found no idle connection.
type PoolCollector struct {
	pool  *pgxpool.Pool
	descs [8]*prometheus.Desc
}

// NewPoolCollector returns the collector of pool, labelled dbName.
func NewPoolCollector(pool *pgxpool.Pool, dbName string) *PoolCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("go_sql_"+name, help, nil, prometheus.Labels{"db_name": dbName})
	}
	return &PoolCollector{pool: pool, descs: [8]*prometheus.Desc{
		desc("max_open_connections", "Maximum number of open connections to the database."),
		desc("open_connections", "The number of established connections both in use and idle."),
		desc("in_use_connections", "The number of connections currently in use."),
		desc("idle_connections", "The number of idle connections."),
		desc("wait_count_total", "The total number of connections waited for."),
		desc("wait_duration_seconds_total", "The total time blocked waiting for a new connection."),
		desc("max_idle_time_closed_total", "The total number of connections closed due to SetConnMaxIdleTime."),
		desc("max_lifetime_closed_total", "The total number of connections closed due to SetConnMaxLifetime."),
	}}
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	values := [8]float64{float64(s.MaxConns()), float64(s.TotalConns()), float64(s.AcquiredConns()), float64(s.IdleConns()),
		float64(s.EmptyAcquireCount()), s.EmptyAcquireWaitTime().Seconds(), float64(s.MaxIdleDestroyCount()), float64(s.MaxLifetimeDestroyCount())}
	for i, d := range c.descs {
		kind := prometheus.GaugeValue
		if i >= 4 {
			kind = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(d, kind, values[i])
	}
}
