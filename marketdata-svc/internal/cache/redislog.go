package cache

import (
	"context"
	"fmt"
	"log/slog"
)

// RedisLogger adapts slog to go-redis's logger, whose default writes plain
// text to stderr and so breaks a JSON log stream. Its lines (one per failed
// dial during an outage) go out at debug level: the cache and the limiter
// already report outages, rate-limited, at warn.
type RedisLogger struct {
	Log *slog.Logger
}

// Printf logs one go-redis message.
func (l RedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.Log.DebugContext(ctx, "redis client", "msg", fmt.Sprintf(format, v...))
}
