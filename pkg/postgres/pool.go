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
	pool    *pgxpool.Pool
	metrics []poolMetric
}

// poolMetric is one series of a PoolCollector and where its value comes
// from.
type poolMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*pgxpool.Stat) float64
}

// NewPoolCollector returns the collector of pool, labelled dbName.
func NewPoolCollector(pool *pgxpool.Pool, dbName string) *PoolCollector {
	m := func(name, help string, kind prometheus.ValueType, value func(*pgxpool.Stat) float64) poolMetric {
		return poolMetric{prometheus.NewDesc("go_sql_"+name, help, nil, prometheus.Labels{"db_name": dbName}), kind, value}
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	return &PoolCollector{pool: pool, metrics: []poolMetric{
		m("max_open_connections", "Maximum number of open connections to the database.", gauge,
			func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
		m("open_connections", "The number of established connections both in use and idle.", gauge,
			func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) }),
		m("in_use_connections", "The number of connections currently in use.", gauge,
			func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
		m("idle_connections", "The number of idle connections.", gauge,
			func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
		m("wait_count_total", "The total number of connections waited for.", counter,
			func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
		m("wait_duration_seconds_total", "The total time blocked waiting for a new connection.", counter,
			func(s *pgxpool.Stat) float64 { return s.EmptyAcquireWaitTime().Seconds() }),
		m("max_idle_time_closed_total", "The total number of connections closed due to SetConnMaxIdleTime.", counter,
			func(s *pgxpool.Stat) float64 { return float64(s.MaxIdleDestroyCount()) }),
		m("max_lifetime_closed_total", "The total number of connections closed due to SetConnMaxLifetime.", counter,
			func(s *pgxpool.Stat) float64 { return float64(s.MaxLifetimeDestroyCount()) }),
	}}
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(s))
	}
}
