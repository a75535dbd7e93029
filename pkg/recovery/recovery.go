// Package recovery turns a handler's panic into the service's own 500
// answer, the same way in both services: the panic and its stack are logged
// once with the request id, and a response already under way is cut off
// rather than left looking complete.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/gin-gonic/gin"
)

// ErrPanic is wrapped by the error Middleware hands to answer: the panic is
// logged already, so the service's error mapping must not log it again.
var ErrPanic = errors.New("panic")

// Middleware recovers panics of the handlers after it. requestID names the
// request in the log line; answer writes the service's error for err when
// nothing was written yet. Once the status line is out, a 500 can no
// longer be sent: the connection is aborted (http.ErrAbortHandler), so the
// client sees a broken response instead of a truncated one that parses.
// http.ErrAbortHandler itself passes through unlogged, as net/http intends.
func Middleware(log *slog.Logger, requestID func(*gin.Context) string, answer func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			log.LogAttrs(context.WithoutCancel(c.Request.Context()), slog.LevelError, "panic",
				slog.String("request_id", requestID(c)), slog.String("panic", fmt.Sprint(r)),
				slog.String("stack", string(debug.Stack())))
			if c.Writer.Written() {
				c.Abort()
				panic(http.ErrAbortHandler)
			}
			answer(c, fmt.Errorf("%w: %v", ErrPanic, r))
		}()
		c.Next()
	}
}
