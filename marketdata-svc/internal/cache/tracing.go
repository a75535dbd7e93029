package cache

import (
	"fmt"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// TraceRedis makes every command of rdb a client span under its caller's
// span, from tp (pkg/tracing's provider). Spans are named by the command
// alone: its arguments (cache keys and entries, rate-limit counters) are
// never recorded, nor the caller's source line, which costs a stack walk
// per command.
func TraceRedis(rdb redis.UniversalClient, tp trace.TracerProvider) error {
	err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp),
		redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
	if err != nil {
		return fmt.Errorf("trace redis: %w", err)
	}
	return nil
}
