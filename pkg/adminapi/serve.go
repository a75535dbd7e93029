package adminapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Server returns the admin API's *http.Server for pkg/httpserve, with
// fixed, short timeouts: its callers are systems sending small requests.
// It reads the token file first, so a missing or malformed file stops the
// service at start-up.
func Server(tokenFile string, o Options) (*http.Server, error) {
	toks, err := LoadTokens(tokenFile, func(err error) {
		o.Log.Warn("admin token file changed but is not usable: keeping the previous tokens", "error", err.Error())
	})
	if err != nil {
		return nil, err
	}
	o.Tokens = toks
	h, err := New(o)
	if err != nil {
		return nil, err
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(o.Log.Handler(), slog.LevelWarn)}, nil
}

// auditBatch bounds one delete of expired audit rows.
const auditBatch = 1000

// ExpireAudit deletes audit rows older than retention, at once and then
// hourly, in batches, until ctx ends. Every replica runs it: the deletes
// are idempotent, and a batch is small.
func ExpireAudit(ctx context.Context, store *keystore.Store, retention time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(time.Hour)
	defer ticker.Stop()
	for {
		for {
			n, err := store.DeleteAuditBefore(ctx, time.Now().Add(-retention), auditBatch)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("expire audit rows", "error", err.Error())
				}
				break
			}
			if n < auditBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Start registers the admin metrics of namespace on reg and starts
// ExpireAudit until bg ends; done closes when it has. Both run whether or
// not the admin API is served: the keys command writes keys and the trail
// too, and dashboards expect the metrics on every replica.
func Start(bg context.Context, store *keystore.Store, retention time.Duration, reg prometheus.Registerer, namespace string,
	log *slog.Logger) (m *Metrics, done <-chan struct{}, err error) {
	if m, err = NewMetrics(reg, namespace, store); err != nil {
		return nil, nil, err
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ExpireAudit(bg, store, retention, log)
	}()
	return m, finished, nil
}
