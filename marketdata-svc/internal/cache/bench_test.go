package cache

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// BenchmarkEncodedEODHit is the cache's share of a hit in process memory:
// the version read from memory, the key built on the stack, the LRU
// lookup. With Redis it must be the same: a hit makes no network call.
func BenchmarkEncodedEODHit(b *testing.B) {
	for _, kind := range []string{"local", "redis"} {
		b.Run(kind, func(b *testing.B) {
			inner := &countingStore{}
			c := NewLocal(inner, at(1), 100, Options{Registry: prometheus.NewRegistry()})
			if kind == "redis" {
				rdb, err := NewRedisClient(testenv.Redis(b), time.Second)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { rdb.Close() })
				c = NewRedis(inner, rdb, at(1), Options{Registry: prometheus.NewRegistry()})
			}
			q := query("SYN000001")
			q.Symbols = append(q.Symbols, "SYN000002")
			ctx := context.Background()
			if _, err := c.EncodedEOD(ctx, q); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.EncodedEOD(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			if inner.calls.Load() != 1 {
				b.Fatalf("%d store calls", inner.calls.Load())
			}
		})
	}
}
