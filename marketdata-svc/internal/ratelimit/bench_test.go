package ratelimit

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// roundTrips counts a client's network round trips to Redis: each command
// sent alone and each pipeline is one.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// BenchmarkAllow compares the exact mode (one script per request, batched
// into pipelines) with the leased mode, against a real Redis, for a key
// with a customer's large limits (the bench harness's: 100000/s and 2e9 a
// month), from 8 concurrent requests per core. roundtrips/10k is the network round
// trips to Redis per 10,000 requests.
func BenchmarkAllow(b *testing.B) {
	p := auth.Principal{KeyID: "bench", RatePerSecond: 100_000, MonthlyQuota: 2_000_000_000}
	b.Run("exact", func(b *testing.B) {
		l, rdb := redisLimiter(b, testenv.Redis(b))
		var rt roundTrips
		rdb.AddHook(&rt)
		benchAllow(b, l, p, &rt)
	})
	b.Run("lease", func(b *testing.B) {
		l, rdb := leasedLimiter(b, testenv.Redis(b), nil)
		runLeased(b, l)
		var rt roundTrips
		rdb.AddHook(&rt)
		benchAllow(b, l, p, &rt)
	})
}

func benchAllow(b *testing.B, l limiter, p auth.Principal, rt *roundTrips) {
	ctx := context.Background()
	if d := l.Allow(ctx, p); d.Err != nil { // warm: scripts loaded, first lease
		b.Fatal(d.Err)
	}
	rt.n.Store(0)
	var refused atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d := l.Allow(ctx, p); d.Err != nil || d.Degraded {
				refused.Add(1)
			}
		}
	})
	b.StopTimer()
	if refused.Load() > 0 {
		b.Fatalf("%d of %d requests refused or unchecked", refused.Load(), b.N)
	}
	b.ReportMetric(float64(rt.n.Load())*10_000/float64(b.N), "roundtrips/10k")
}
