package accesslog

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/flushwriter"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
)

// BenchmarkMiddleware is one access-logged request of the shape the
// services serve most (an authenticated GET with an access_key), through
// the services' own handler chain: the access line behind a
// flushwriter. Off is the same request with Info disabled, so the
// difference is the line's whole cost; slog is the same line written by
// slog's JSON handler instead of appendLine (the package comment has the
// figures).
func BenchmarkMiddleware(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	for _, level := range []struct {
		name   string
		level  slog.Level
		bySlog bool
	}{{"on", slog.LevelInfo, false}, {"slog", slog.LevelInfo, true}, {"off", slog.LevelWarn, false}} {
		b.Run(level.name, func(b *testing.B) {
			out := flushwriter.New(io.Discard, flushwriter.Options{})
			defer out.Close()
			log := New(out, level.level)
			if level.bySlog {
				h := slog.NewJSONHandler(out, nil)
				log.viaSlog = func(l *line) { _ = h.Handle(context.Background(), slogRecord(l)) }
			}
			e := gin.New()
			e.Use(httpedge.RequestID(), log.Middleware(nil, "q"))
			principal := auth.Principal{AccountID: "acc_01JD8Z3Q4W5E6R7T8Y9U0I1O2P", KeyID: "9012bf93-6445-4a70-b4d4-2b5f34fc098f"}
			e.GET("/v1/eod", func(c *gin.Context) {
				c.Request = c.Request.WithContext(auth.WithPrincipal(c.Request.Context(), principal))
				c.Status(http.StatusOK)
			})
			req := httptest.NewRequest(http.MethodGet, "/v1/eod?access_key=tdm_ooMbWScOZQrIw196a18hO5lsCREBay17fuwFCXh9dKd1Gzukq&symbols=AAPL,MSFT&limit=100", nil)
			req.RemoteAddr = "10.1.2.3:54321"
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
		})
	}
}
