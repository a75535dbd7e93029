package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// operational lists the routes outside the API: a browser app of another
// origin must never read them, whatever MARKETDATA_CORS_ORIGINS says. A
// new route is taken for an API route (and must carry the policy) until
// it is listed here.
var operational = map[string]bool{
	"/healthz": true, "/readyz": true, "/metrics": true,
	"/v1/openapi.json": true, "/v2/openapi.json": true,
	"/docs": true, "/docs/*asset": true,
}

// routeParam is a path parameter of gin's syntax (":symbol", "*asset").
var routeParam = regexp.MustCompile(`[:*][a-z]+`)

// TestCORSOnAPIRoutesOnly walks every route of the router, with the widest
// policy ("*"): the API routes answer an allowed origin's request and its
// preflight with CORS headers, the operational ones with none at all.
func TestCORSOnAPIRoutesOnly(t *testing.T) {
	const origin = "https://elsewhere.example.com"
	logs := &logbuf.Buffer{}
	store := newFakeStore(nil)
	srv, err := httpapi.NewServer(httpapi.Options{
		Store:       store,
		Auth:        auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store}),
		Limiter:     ratelimit.NewLocal(nil, time.Now),
		Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
		AccessLog:   accesslog.New(logs, nil),
		Registry:    prometheus.NewRegistry(),
		CORSOrigins: []string{"*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	routes := srv.Routes()
	if len(routes) < 20 {
		t.Fatalf("only %d routes listed", len(routes))
	}
	seen := map[string]bool{}
	for _, r := range routes {
		if r.Method != http.MethodGet {
			continue
		}
		seen[r.Path] = true
		path := routeParam.ReplaceAllString(r.Path, "X")
		api := !operational[r.Path]
		if api && !strings.HasPrefix(r.Path, "/v1/") && !strings.HasPrefix(r.Path, "/v2/") {
			t.Errorf("%s is neither an API route nor listed as operational", r.Path)
		}
		for _, preflight := range []bool{false, true} {
			method := http.MethodGet
			if preflight {
				method = http.MethodOptions
			}
			req := httptest.NewRequest(method, path, nil)
			req.Header.Set("Origin", origin)
			if preflight {
				req.Header.Set("Access-Control-Request-Method", "GET")
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			var cors []string
			for name := range rec.Header() {
				if strings.HasPrefix(name, "Access-Control-") {
					cors = append(cors, name)
				}
			}
			if rec.Header().Get("Vary") == "Origin" {
				cors = append(cors, "Vary: Origin")
			}
			switch {
			case api && rec.Header().Get("Access-Control-Allow-Origin") != origin:
				t.Errorf("%s %s (API): %d without Access-Control-Allow-Origin: %v", method, r.Path, rec.Code, rec.Header())
			case api && preflight && rec.Code != http.StatusNoContent:
				t.Errorf("preflight of %s: %d, want 204", r.Path, rec.Code)
			case !api && len(cors) > 0:
				t.Errorf("%s %s (operational): %d with CORS headers %v", method, r.Path, rec.Code, cors)
			}
		}
	}
	for p := range operational {
		if !seen[p] {
			t.Errorf("operational route %s is gone: update the list", p)
		}
	}
}
