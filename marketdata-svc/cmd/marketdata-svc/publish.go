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
)

// changeText sums up what a load changed, for the data commands' output.
func changeText(r marketdatadb.LoadResult) string {
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
func publish(ctx context.Context, cfg config.Config, log *slog.Logger, version int64) error {
	if version == 0 || !cfg.RedisConfigured() {
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
