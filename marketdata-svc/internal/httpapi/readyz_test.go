package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// TestReadyzReportsThePrimaryAndEachReplica: ready only while the primary
// answers as a primary; a replica down is shown, never unready.
func TestReadyzReportsThePrimaryAndEachReplica(t *testing.T) {
	for _, c := range []struct {
		name     string
		ping     error
		replicas []string
		status   int
	}{
		{"primary and replicas up", nil, []string{"ok", "ok"}, 200},
		{"a replica down", nil, []string{"ok", "unavailable"}, 200},
		{"every replica down", nil, []string{"unavailable", "unavailable"}, 200},
		{"the node reached is a demoted primary", postgres.ErrReadOnly, []string{"ok", "ok"}, 503},
		{"no primary reachable", errors.New("dial: connection refused"), []string{"ok", "behind"}, 503},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newFakeStore(nil)
			fixed := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
			srv, err := httpapi.NewServer(httpapi.Options{
				Store:         store,
				Auth:          auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store}),
				Limiter:       ratelimit.NewLocal(nil, func() time.Time { return fixed }),
				Logger:        slog.New(slog.NewJSONHandler(&logbuf.Buffer{}, nil)),
				AccessLog:     accesslog.New(&logbuf.Buffer{}, nil),
				Registry:      prometheus.NewRegistry(),
				Ping:          func(context.Context) error { return c.ping },
				ReplicaStates: func() []string { return c.replicas },
			})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			var body struct {
				Replicas []string `json:"replicas"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if rec.Code != c.status || !slices.Equal(body.Replicas, c.replicas) {
				t.Errorf("readyz = %d %s; want %d with replicas %v", rec.Code, rec.Body, c.status, c.replicas)
			}
		})
	}
}
