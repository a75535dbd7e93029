package apiengine_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/apiengine"
	"github.com/tickerdesk/tickerdesk/pkg/recovery"
)

// TestEdgeOrder: a request crosses the tracing handlers first, then gets a
// request id and a deadline; a panic is answered through Fail, and the
// access log and the metrics see the status Fail wrote.
func TestEdgeOrder(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	var logged strings.Builder
	reg := prometheus.NewRegistry()
	var order []string
	var failed error
	routes := func(e *gin.Engine) {
		e.GET("/ok", func(c *gin.Context) {
			order = append(order, "handler")
			if _, ok := c.Request.Context().Deadline(); !ok {
				t.Error("handler ran without the request deadline")
			}
			c.Status(http.StatusNoContent)
		})
		e.GET("/panic", func(*gin.Context) { panic("boom") })
	}
	h, err := apiengine.New(apiengine.Options{
		Log: slog.New(slog.NewJSONHandler(&logged, nil)), Access: accesslog.New(&logged, nil), Registry: reg, RequestTimeout: time.Second,
		Private: []string{"q"},
		Trace:   []gin.HandlerFunc{func(c *gin.Context) { order = append(order, "trace"); c.Next() }},
		Fail: func(c *gin.Context, err error) {
			failed = err
			c.AbortWithStatus(http.StatusTeapot)
		},
		Routes: routes,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/ok?q=private-words", nil))
	if w.Code != http.StatusNoContent || w.Header().Get("X-Request-ID") == "" || strings.Join(order, ",") != "trace,handler" {
		t.Errorf("GET /ok: status %d, request id %q, order %v", w.Code, w.Header().Get("X-Request-ID"), order)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/panic", nil))
	if w.Code != http.StatusTeapot || !errors.Is(failed, recovery.ErrPanic) {
		t.Errorf("GET /panic: status %d, Fail saw %v", w.Code, failed)
	}
	if strings.Contains(logged.String(), "private-words") || !strings.Contains(logged.String(), `"status":418`) {
		t.Errorf("access log quotes a private parameter or lacks the recovered status:\n%s", logged.String())
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := -1
	for _, f := range families {
		if f.GetName() == "http_requests_total" {
			series = len(f.GetMetric())
		}
	}
	if series != 2 {
		t.Errorf("http_requests_total has %d series, want one for each request", series)
	}
}

func TestBadTrustedProxy(t *testing.T) {
	_, err := apiengine.New(apiengine.Options{TrustedProxies: []string{"not-an-address"}, Registry: prometheus.NewRegistry(),
		Log: slog.Default(), Access: accesslog.New(io.Discard, nil), Fail: func(*gin.Context, error) {}, Routes: func(*gin.Engine) {}})
	if err == nil || !strings.Contains(err.Error(), "trusted proxies") {
		t.Fatalf("a malformed trusted proxy: err = %v", err)
	}

}

func TestAccessLogIsRequired(t *testing.T) {
	_, err := apiengine.New(apiengine.Options{Registry: prometheus.NewRegistry(), Log: slog.Default(),
		Fail: func(*gin.Context, error) {}, Routes: func(*gin.Engine) {}})
	if err == nil {
		t.Fatal("an engine without an access log was built: its requests would go unlogged")
	}
}

func TestShuttingDown(t *testing.T) {
	h, err := apiengine.New(apiengine.Options{Registry: prometheus.NewRegistry(), Log: slog.Default(), Access: accesslog.New(io.Discard, nil),
		Fail: func(*gin.Context, error) {}, Routes: func(*gin.Engine) {}})
	if err != nil {
		t.Fatal(err)
	}
	if h.ShuttingDown() {
		t.Fatal("a new handler is shutting down")
	}
	h.SetShuttingDown()
	if !h.ShuttingDown() {
		t.Fatal("SetShuttingDown did not stick")
	}
}
