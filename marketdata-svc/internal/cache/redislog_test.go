package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestRedisLoggerWritesJSON(t *testing.T) {
	var buf bytes.Buffer
	l := RedisLogger{Log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	l.Printf(context.Background(), "redis: %s: failed to dial: %v", "pool.go:770", "connection refused")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["msg"] != "redis: pool.go:770: failed to dial: connection refused" || line["level"] != "DEBUG" {
		t.Fatalf("line = %v", line)
	}
}
