// Package accesslog writes one structured line per request, the same fields
// in both services, with the URL's secrets and private parameters redacted
// before the line is made and no header or body logged.
package accesslog

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/httpmetrics"
)

// Middleware logs each request at Info after it is served: request id,
// method and route (through httpmetrics, so a client cannot choose them),
// the path with its query redacted (pkg/auth's credential parameters, such
// as access_key, plus the private ones named), status, bytes, duration in
// microseconds, client address and, once authenticated, the account and
// key ids.
func Middleware(log *slog.Logger, private ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		end := time.Now()
		ctx := c.Request.Context()
		if !log.Enabled(ctx, slog.LevelInfo) {
			return
		}
		// Typed attributes in a fixed array: no boxing, no slice growth.
		var attrs [10]slog.Attr
		a := append(attrs[:0],
			slog.String("request_id", httpedge.RequestIDOf(c)),
			slog.String("method", httpmetrics.Method(c.Request.Method)),
			slog.String("route", httpmetrics.Route(c.FullPath())),
			slog.String("path", auth.RedactURL(c.Request.URL, private...)),
			slog.Int("status", c.Writer.Status()),
			slog.Int("bytes", c.Writer.Size()),
			// Whole microseconds: slog's JSON handler writes a float
			// through encoding/json (an encoder per value, a fifth of
			// the line's cost), an integer with strconv.
			slog.Int64("duration_us", end.Sub(start).Microseconds()),
			slog.String("client_ip", c.ClientIP()),
		)
		if p, ok := auth.PrincipalFrom(ctx); ok {
			a = append(a, slog.String("account_id", p.AccountID), slog.String("key_id", p.KeyID))
		}
		// The record goes to the handler directly: with no caller's pc to
		// find (the line's source is always this function, and the
		// handlers add none), Logger.LogAttrs's runtime.Callers is a tenth
		// of the line's cost for nothing.
		r := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		r.AddAttrs(a...)
		_ = log.Handler().Handle(ctx, r)
	}
}
