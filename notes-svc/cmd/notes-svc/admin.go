package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/adminapi"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// startAdmin registers the admin metrics and starts the audit trail's
// retention, both whether or not the admin API is served (the keys command
// writes keys and the trail too), and returns the admin API's server when
// NOTES_ADMIN_ADDR is set, else nil. A revocation or roll made here drops
// the key from this process's auth cache; other replicas see it within
// NOTES_KEY_CACHE_TTL.
func startAdmin(bg context.Context, cfg config.Config, store *notesdb.Store, authn *auth.Authenticator, reg prometheus.Registerer, log *slog.Logger) (*http.Server, <-chan struct{}, error) {
	metrics, err := adminapi.NewMetrics(reg, "notes", store.Store)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		adminapi.ExpireAudit(bg, store.Store, cfg.AuditRetention, log)
	}()
	if cfg.AdminAddr == "" {
		return nil, done, nil
	}
	srv, err := adminapi.Server(cfg.AdminTokenFile, adminapi.Options{
		Service: "notes-svc", Store: store.Store, Metrics: metrics, Changed: authn.Forget, Log: log,
	})
	return srv, done, err
}
