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
	metrics, done, err := adminapi.Start(bg, store.Store, cfg.AuditRetention, reg, "notes", log)
	if err != nil || cfg.AdminAddr == "" {
		return nil, done, err
	}
	srv, err := adminapi.Server(cfg.AdminTokenFile, adminapi.Options{
		Service: "notes-svc", Store: store.Store, Metrics: metrics, Changed: authn.Forget, Log: log,
	})
	return srv, done, err
}
