// Package accesslog writes one structured line per request, the same fields
// in both services, with the URL's secrets and private parameters redacted
// before the line is made and no header or body logged.
//
// The line is encoded by hand (line.go), byte for byte what slog's JSON
// handler writes for the same record (TestLineIsSlogsLine and FuzzLine
// hold it to slog.NewJSONHandler), because it is written once per request
// and slog's generic machinery is a material share of the cheapest
// request the services serve, marketdata's cache hit (target: 0.8× of bare
// Gin). On the 2-core shared machine, benchstat over 10 runs each:
// BenchmarkMiddleware's logged request costs 2.9 µs and 7 allocations
// with the hand encoder and 6.2 µs and 11 allocations through slog's
// handler (Info off: 0.9 µs), and BenchmarkLine's encoding alone is
// 1.1 µs and no allocation against slog's 3.3 µs and 2; marketdata's
// BenchmarkEODCacheHit (the whole cache-hit path, 21 allocations) went
// from a median of 9.5 µs to 12.7 µs with slog's handler in alternating
// runs. A difference of 2–3 µs per request is far above the 2–3 % of a
// cache hit that would make it negligible, so the encoder stays; replace
// it with slog.NewJSONHandler if BenchmarkMiddleware's on and slog
// variants ever come within that.
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
	// viaSlog, when set (only by BenchmarkMiddleware), writes each line
	// instead of writeLine, through slog's JSON handler: the measure of
	// what the hand encoder saves per request.
	viaSlog func(*line)
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

// writeLine encodes ln into a pooled buffer and writes it in one Write.
func (l *Log) writeLine(ln *line) {
	bp := l.buffers.Get().(*[]byte)
	b := appendLine((*bp)[:0], ln)
	_, _ = l.out.Write(b)
	if cap(b) <= maxPooledLine {
		*bp = b
		l.buffers.Put(bp)
	}
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
		if l.viaSlog != nil {
			// A copy, so that ln itself stays on the stack.
			cp := ln
			l.viaSlog(&cp)
			return
		}
		l.writeLine(&ln)
	}
}
