package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/cache"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/replicas"
)

// changeText sums up what a load changed, for the data commands' output.
func changeText(r ingest.LoadResult) string {
	if !r.Changed() {
		return "no changes"
	}
	return fmt.Sprintf("%d bars, %d tickers, %d exchanges, %d symbols' actions changed, %d bars re-adjusted; data version %d",
		r.BarsChanged, r.TickersChanged, r.ExchangesChanged, r.ActionsChanged, r.BarsAdjusted, r.Version)
}

// publish stores a new data version in Redis, after the commit, so that
// caches drop entries built from older data. A failure is an error: the
// data is committed, and caches serve the old data until a running
// instance finds the database ahead of Redis (dataversion.NewRedis checks
// every 5 s) and publishes it.
//
// With replicas, it first waits (at most cfg.ReplicaWait) for them to
// replay the commit, so that readers of the new version find them caught
// up; one still behind is skipped by readers until it has replayed it.
func publish(ctx context.Context, cfg config.Config, log *slog.Logger, version int64) error {
	if version == 0 {
		return nil
	}
	waitReplicas(ctx, cfg, log)
	if !cfg.RedisConfigured() {
		return nil
	}
	held, err := publishVersion(ctx, cfg, version)
	if err != nil {
		return fmt.Errorf("data committed (version %d) but not announced to caches: %w", version, err)
	}
	log.Info("data version published", "version", version, "redis_version", held)
	return nil
}

// publishVersion announces version on the Redis that cfg names and
// returns the version Redis holds afterwards.
func publishVersion(ctx context.Context, cfg config.Config, version int64) (int64, error) {
	rdb, err := cache.NewUniversalClient(redisConn(cfg), time.Second)
	if err != nil {
		return 0, errors.New("publish data version: invalid redis url")
	}
	defer rdb.Close()
	return dataversion.Publish(ctx, rdb, version)
}

// waitReplicas waits for cfg's replicas to replay the primary's WAL up to
// its current position, and logs the outcome. It never fails the import:
// the data is committed, and readers never read a replica behind the data
// version in force (package replicas).
func waitReplicas(ctx context.Context, cfg config.Config, log *slog.Logger) {
	if len(cfg.DatabaseReplicaURLs) == 0 {
		return
	}
	primary, err := marketdatadb.Open(ctx, cfg)
	if err != nil {
		log.Warn("wait for replicas", "err", err)
		return
	}
	defer primary.Close()
	router, err := replicas.Open(cfg, primaryNode(primary), nil, replicas.Options{})
	if err != nil {
		log.Warn("wait for replicas", "err", err)
		return
	}
	defer router.Close()
	w, err := router.WaitReplayed(ctx, cfg.ReplicaWait)
	switch {
	case err != nil:
		log.Warn("wait for replicas", "err", err)
	case len(w.Lagging) > 0:
		log.Warn("replicas still behind the import after the wait: readers skip them until they replay it",
			"lsn", w.LSN, "lagging", w.Lagging, "waited", w.Elapsed.String())
	default:
		log.Info("replicas replayed the import", "lsn", w.LSN, "waited", w.Elapsed.String())
	}
}
