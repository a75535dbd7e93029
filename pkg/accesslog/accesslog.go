// Package accesslog writes one structured line per request, the same fields
// in both services, with the URL's secrets and private parameters redacted
// before the line is made and no header or body logged.
package accesslog

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/httpmetrics"
)

// Log writes access lines into a service's log stream. The lines are the
// ones slog's JSON handler would write for the same record (see line.go),
// so a service gives Log the writer and level of its slog handler and its
// log stays one uniform stream.
type Log struct {
	out     io.Writer
	level   slog.Leveler
	buffers sync.Pool
}

// maxPooledLine bounds the line buffers kept for reuse: a request with a
// huge URL gets a buffer of its own, which is not kept.
const maxPooledLine = 16 << 10

// New returns a Log that writes to out when level admits Info; a nil
// level means Info, as in slog.HandlerOptions. Each line is one Write
// call, so out must be safe for concurrent use, as the services'
// flushwriter.Writer is.
func New(out io.Writer, level slog.Leveler) *Log {
	return &Log{out: out, level: level, buffers: sync.Pool{New: func() any {
		b := make([]byte, 0, 1024)
		return &b
	}}}
}

// enabled reports whether Info lines are written, as slog's handler
// decides it.
func (l *Log) enabled() bool {
	least := slog.LevelInfo
	if l.level != nil {
		least = l.level.Level()
	}
	return slog.LevelInfo >= least
}

// Middleware logs each request at Info after it is served: request id,
// method and route (through httpmetrics, so a client cannot choose them),
// the path with its query redacted (pkg/auth's credential parameters, such
// as access_key, plus the private ones named), status, bytes, duration in
// whole microseconds, client address (clientIP's answer: gin's ClientIP
// when nil) and, once authenticated, the account and key ids.
func (l *Log) Middleware(clientIP func(*gin.Context) string, private ...string) gin.HandlerFunc {
	if clientIP == nil {
		clientIP = (*gin.Context).ClientIP
	}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		if !l.enabled() {
			return
		}
		end := time.Now()
		ln := line{
			time:      end,
			requestID: httpedge.RequestIDOf(c),
			method:    httpmetrics.Method(c.Request.Method),
			route:     httpmetrics.Route(c.FullPath()),
			url:       c.Request.URL,
			private:   private,
			status:    c.Writer.Status(),
			bytes:     c.Writer.Size(),
			// Whole microseconds, which log queries can sum and compare
			// without parsing a decimal.
			durationUS: end.Sub(start).Microseconds(),
			clientIP:   clientIP(c),
		}
		if p, ok := auth.PrincipalFrom(c.Request.Context()); ok {
			ln.accountID, ln.keyID, ln.authenticated = p.AccountID, p.KeyID, true
		}
		bp := l.buffers.Get().(*[]byte)
		b := appendLine((*bp)[:0], &ln)
		_, _ = l.out.Write(b)
		if cap(b) <= maxPooledLine {
			*bp = b
			l.buffers.Put(bp)
		}
	}
}
