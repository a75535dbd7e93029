package cache

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// readsCounter is the database's reads below the cache, counting the EOD
// queries each page costs.
type readsCounter struct {
	marketdata.Store
	mu    sync.Mutex
	calls map[string]int
}

func (r *readsCounter) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	r.mu.Lock()
	r.calls[q.CanonicalKey()]++
	r.mu.Unlock()
	return r.Store.EOD(ctx, q)
}

func (r *readsCounter) count(q marketdata.EODQuery) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[q.CanonicalKey()]
}

// changesRead tells each read of the changes, once it has returned.
type changesRead struct {
	Changes
	done chan struct{}
}

func (c changesRead) EODChanges(ctx context.Context, from, to int64, limit int) (marketdata.EODChanges, error) {
	defer func() { c.done <- struct{}{} }()
	return c.Changes.EODChanges(ctx, from, to, limit)
}

// TestImportKeepsUntouchedPages: the day's import (a bar of AAA and BBB,
// a split of BBB) leaves a page of AAA's history exact, which the cache
// then serves without a store query, from process memory or from the
// page another instance left in Redis; the pages it changes (BBB's, whose
// adjusted values the split halves, AAA's open window and a window that
// takes the new day in) are read again. Every answer after the import
// equals the database's. An import whose changes are unknown (a ticker
// renamed) keeps nothing.
func TestImportKeepsUntouchedPages(t *testing.T) {
	day := testenv.Day
	window := func(from, to string, symbols ...string) marketdata.EODQuery {
		q := marketdata.EODQuery{Symbols: symbols, DateFrom: day(from), Sort: marketdata.SortDesc, Limit: 100}
		if to != "" {
			q.DateTo = day(to)
		}
		return q
	}
	history := window("2024-01-02", "2024-01-05", "AAA")
	latest := window("2024-01-02", "2024-01-08", "AAA")
	latest.Latest = true
	onExchange := window("2024-01-02", "2024-01-05", "AAA")
	onExchange.Exchange = "XNAS"
	kept := []marketdata.EODQuery{history, latest, onExchange}
	reread := []marketdata.EODQuery{
		window("2024-01-02", "2024-01-05", "BBB"),
		window("2024-01-02", "2024-01-05", "AAA", "BBB"),
		window("2024-01-02", "", "AAA"),
		window("2024-01-05", "2024-01-09", "AAA"),
	}
	// probe is a page neither phase looks at, which makes a cache learn of
	// a version.
	probe := window("2024-01-02", "2024-01-02", "NOEX")

	for _, backend := range []string{"local", "redis"} {
		t.Run(backend, func(t *testing.T) {
			s := testenv.Store(t)
			ctx := context.Background()
			testenv.Seed(t, s)
			inner := &readsCounter{Store: s.Reads, calls: map[string]int{}}
			v1, err := s.DataVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			versions := at(v1)
			// reads tells c's reads of the changes; the filler's go unheard.
			reads := make(chan struct{}, 16)
			opts := func(reads chan struct{}) Options {
				return Options{TTL: time.Minute, Timeout: time.Second, Registry: prometheus.NewRegistry(),
					Changes: changesRead{Changes: s, done: reads}}
			}
			// filler builds the pages at v1; c serves them after the import.
			var filler, c *Store
			if backend == "local" {
				c = NewLocal(inner, versions, 100, opts(reads))
				filler = c
			} else {
				url := testenv.Redis(t)
				instance := func(reads chan struct{}) *Store {
					rdb, err := NewRedisClient(url, time.Second)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { rdb.Close() })
					return NewRedis(inner, rdb, versions, opts(reads))
				}
				filler, c = instance(make(chan struct{}, 16)), instance(reads)
				mustEOD(t, c, probe) // c serves v1 too, without the pages
			}
			for _, q := range append(append([]marketdata.EODQuery{}, kept...), reread...) {
				mustEOD(t, filler, q)
			}
			before := map[string]int{}
			for _, q := range append(append([]marketdata.EODQuery{}, kept...), reread...) {
				before[q.CanonicalKey()] = inner.count(q)
			}

			v2 := importDay(t, s, ingest.Load{
				Bars: ingest.Bars([]ingest.BarRow{
					{Symbol: "AAA", Date: day("2024-01-09"), Open: 105, High: 106, Low: 104, Close: 105, Volume: 1000},
					{Symbol: "BBB", Date: day("2024-01-09"), Open: 102, High: 103, Low: 101, Close: 102, Volume: 2000},
				}),
				Splits: []marketdata.Split{{Symbol: "BBB", Date: day("2024-01-09"), Factor: 2}},
			})
			versions.v.Store(v2)
			learn(t, c, probe, reads, true)

			for _, q := range kept {
				got := c.mustEncoded(t, q)
				if n := inner.count(q); n != before[q.CanonicalKey()] {
					t.Errorf("%s: read from the store again (%d queries, %d before the import)", q.CanonicalKey(), n, before[q.CanonicalKey()])
				}
				sameAsStore(t, s.Reads, q, got)
			}
			if got := testutil.ToFloat64(c.metrics.carried); got != float64(len(kept)) {
				t.Errorf("carried %v pages, want %d", got, len(kept))
			}
			for _, q := range reread {
				got := c.mustEncoded(t, q)
				if n := inner.count(q); n != before[q.CanonicalKey()]+1 {
					t.Errorf("%s: %d store queries, want one more than the %d before the import", q.CanonicalKey(), n, before[q.CanonicalKey()])
				}
				sameAsStore(t, s.Reads, q, got)
			}
			if backend == "redis" {
				// The pages c carried are in Redis at v2 for the others.
				hits := testutil.ToFloat64(filler.metrics.hits)
				for _, q := range kept {
					filler.mustEncoded(t, q)
				}
				if got := testutil.ToFloat64(filler.metrics.hits) - hits; got != float64(len(kept)) {
					t.Errorf("the other instance hit %v of the %d pages carried", got, len(kept))
				}
			}

			// A ticker renamed changes what every bar repeats: nothing is
			// kept across it.
			v3 := importDay(t, s, ingest.Load{Tickers: []ingest.TickerRow{{Symbol: "AAA", Name: "Alpha Renamed", ExchangeMIC: "XNAS"}}})
			versions.v.Store(v3)
			learn(t, c, probe, reads, false)
			n := inner.count(history)
			got := c.mustEncoded(t, history)
			if inner.count(history) != n+1 || !bytes.Contains(got.Data, []byte("Alpha Renamed")) {
				t.Errorf("history after a ticker renamed: %d store queries (%d before), page %s", inner.count(history), n, got.Data)
			}
			sameAsStore(t, s.Reads, history, got)
		})
	}
}

// importDay applies l and returns the version it made.
func importDay(t *testing.T, s *testenv.Stores, l ingest.Load) int64 {
	t.Helper()
	res, err := s.Ingest.Apply(context.Background(), l)
	if err != nil || !res.Changed() {
		t.Fatalf("import: %+v, %v", res, err)
	}
	return res.Version
}

// learn makes c meet the version in force, by a page of probe, and waits
// for its read of the changes since the version before, and, when they
// are known, for the carrier to hold them.
func learn(t *testing.T, c *Store, probe marketdata.EODQuery, reads chan struct{}, known bool) {
	t.Helper()
	c.mustEncoded(t, probe)
	deadline := time.After(30 * time.Second)
	select {
	case <-reads:
	case <-deadline:
		t.Fatal("the changes were not read")
	}
	for known {
		c.carry.mu.Lock()
		known = c.carry.set == nil
		c.carry.mu.Unlock()
		select {
		case <-deadline:
			t.Fatal("the changes read were not kept")
		case <-time.After(time.Millisecond):
		}
	}
}

func (s *Store) mustEncoded(t *testing.T, q marketdata.EODQuery) eodjson.Page {
	t.Helper()
	p, err := s.EncodedEOD(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q.CanonicalKey(), err)
	}
	return p
}

// sameAsStore checks that got is the page the store answers now.
func sameAsStore(t *testing.T, store marketdata.Store, q marketdata.EODQuery, got eodjson.Page) {
	t.Helper()
	page, err := store.EOD(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want := eodjson.Encode(page)
	if !bytes.Equal(got.Data, want.Data) || got.Total != want.Total || got.Count != want.Count {
		t.Errorf("%s: cached %s (total %d), store %s (total %d)", q.CanonicalKey(), got.Data, got.Total, want.Data, want.Total)
	}
}
