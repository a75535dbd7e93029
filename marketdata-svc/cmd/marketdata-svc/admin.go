package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/pkg/adminapi"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// RevokedChannel is the Redis pub/sub channel on which a revocation or a
// roll made through the admin API names the key: every replica drops it
// from its auth cache, so the change bites within about a second instead
// of MARKETDATA_KEY_CACHE_TTL, which stays the bound when a message is
// lost (Redis down, a replica reconnecting). Like the data version's
// channel it is server-wide, which is harmless: a key id of another
// database names no cached key.
const RevokedChannel = "marketdata:key_revoked"

// announceTimeout bounds the publish of a revocation: the change has
// committed, and the cache bound covers a publish that fails.
const announceTimeout = time.Second

// startAdmin registers the admin metrics (whether or not the admin API is
// served), starts the audit trail's retention and, with Redis, the
// subscription to RevokedChannel, both until bg ends, and returns the
// admin API's server when MARKETDATA_ADMIN_ADDR is set, else nil. done
// closes when the audit trail's retention has ended.
func startAdmin(bg context.Context, cfg config.Config, store *marketdatadb.Store, authn *auth.Authenticator, rdb redis.UniversalClient,
	reg prometheus.Registerer, log *slog.Logger) (srv *http.Server, done <-chan struct{}, err error) {
	metrics, finished, err := adminapi.Start(bg, store.Store, cfg.AuditRetention, reg, "marketdata", log)
	if err != nil {
		return nil, nil, err
	}
	if rdb != nil {
		go subscribeRevocations(bg, rdb, authn.Forget, log)
	}
	if cfg.AdminAddr == "" {
		return nil, finished, nil
	}
	changed := authn.Forget
	if rdb != nil {
		changed = func(id string) {
			authn.Forget(id)
			ctx, cancel := context.WithTimeout(context.WithoutCancel(bg), announceTimeout)
			defer cancel()
			if err := rdb.Publish(ctx, RevokedChannel, id).Err(); err != nil {
				log.Warn("announce key revocation: other replicas see it within the key cache's TTL", "key_id", id, "err", err)
			}
		}
	}
	srv, err = adminapi.Server(cfg.AdminTokenFile, adminapi.Options{
		Service: "marketdata-svc", Store: store.Store, Limits: true, Metrics: metrics, Changed: changed, Log: log,
	})
	return srv, finished, err
}

// subscribeRevocations drops each key announced on RevokedChannel from
// the auth cache until ctx ends. go-redis re-subscribes by itself after a
// lost connection; what was announced meanwhile waits for the cache TTL.
func subscribeRevocations(ctx context.Context, rdb redis.UniversalClient, forget func(string), log *slog.Logger) {
	dataversion.Listen(ctx, rdb, RevokedChannel, forget)
}
