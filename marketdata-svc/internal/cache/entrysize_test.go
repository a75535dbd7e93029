package cache

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// sizedStore answers an EOD page of as many bars as the query's limit, so
// that a test chooses each page's encoded size.
type sizedStore struct{ marketdata.Store }

func (sizedStore) EOD(_ context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	bars := make([]marketdata.Bar, q.Limit)
	for i := range bars {
		bars[i] = marketdata.Bar{Symbol: q.Symbols[0], Close: float64(i), Date: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -i)}
	}
	return marketdata.EODPage{Total: int64(len(bars)), Bars: bars}, nil
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestRedisEntriesBounded: a page over the entry cap is served whole but
// never written to Redis (and counted), and every key the cache writes
// has a TTL, so that Redis's memory stays within request rate × TTL × cap
// whatever the queries and whatever Redis's maxmemory says.
func TestRedisEntriesBounded(t *testing.T) {
	for _, c := range []struct {
		name  string
		max   int // 0: the default
		big   int // bars of a page over the cap
		small int // bars of a page under it
	}{
		{"default cap", 0, 4_000, 100},
		{"configured cap", 16 << 10, 400, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := testenv.Redis(t)
			rdb, err := NewRedisClient(url, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rdb.Close() })
			reg := prometheus.NewRegistry()
			store := NewRedis(sizedStore{}, rdb, at(1), Options{TTL: time.Minute, Timeout: time.Second, Registry: reg})
			if c.max > 0 {
				store = store.WithMaxEntryBytes(c.max)
			}
			ctx := context.Background()
			big := marketdata.EODQuery{Symbols: []string{"BIG"}, Sort: marketdata.SortDesc, Limit: c.big}
			page, err := store.EncodedEOD(ctx, big)
			if err != nil || page.Count != c.big {
				t.Fatalf("page over the cap: %d bars, %v; want %d", page.Count, err, c.big)
			}
			if n, err := rdb.Exists(ctx, eodPages{q: big}.redisKey(1)).Result(); err != nil || n != 0 {
				n, _ := rdb.StrLen(ctx, eodPages{q: big}.redisKey(1)).Result()
				t.Errorf("a page of %d bytes was written to Redis (%d bytes stored)", len(page.Data), n)
			}
			if got := counterValue(t, reg, "marketdata_cache_oversize_total"); got != 1 {
				t.Errorf("marketdata_cache_oversize_total = %v, want 1", got)
			}
			for _, sym := range []string{"A", "B", "C"} {
				q := marketdata.EODQuery{Symbols: []string{sym}, Sort: marketdata.SortDesc, Limit: c.small}
				if _, err := store.EncodedEOD(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			keys, err := rdb.Keys(ctx, "marketdata:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 3 {
				t.Errorf("keys %v, want the three pages under the cap", keys)
			}
			for _, k := range keys {
				ttl, err := rdb.PTTL(ctx, k).Result()
				if err != nil || ttl <= 0 || ttl > time.Minute {
					t.Errorf("key %s has TTL %v (%v), want (0, 1m]", k, ttl, err)
				}
			}
		})
	}
}
