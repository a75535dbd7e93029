package cache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// ctxStore is a store below the cache whose queries honour their context,
// as the database does: they end with the context's error when it ends
// before the gate opens.
type ctxStore struct {
	countingStore
	started chan struct{}
	once    sync.Once
}

// wait is a query's start: it says the query started, then waits for
// the gate or the end of ctx.
func (s *ctxStore) wait(ctx context.Context) error {
	s.once.Do(func() { close(s.started) })
	select {
	case <-s.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *ctxStore) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	if err := s.wait(ctx); err != nil {
		return marketdata.EODPage{}, err
	}
	return s.countingStore.EOD(ctx, q)
}

func (s *ctxStore) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	if err := s.wait(ctx); err != nil {
		return marketdata.TickerPage{}, err
	}
	return s.countingStore.Tickers(ctx, q)
}

// TestAbandonedCallerDoesNotFailOthers reproduces an outside audit's finding: concurrent
// misses share one query, which ran on the first caller's context, so when
// that caller went away every other caller of the query, from any account,
// got its error (503). The class is every piece of work the cache shares
// between callers: EOD pages on each backend and path, and ticker pages.
func TestAbandonedCallerDoesNotFailOthers(t *testing.T) {
	redisURL := testenv.Redis(t)
	caches := map[string]func(inner marketdata.Store) *Store{
		"local": func(inner marketdata.Store) *Store {
			return NewLocal(inner, at(0), 16, Options{Registry: prometheus.NewRegistry()})
		},
		"redis": func(inner marketdata.Store) *Store { return newRedisCache(t, redisURL, inner, at(0), time.Second) },
	}
	// Each case asks for its own symbol: the Redis database is shared by
	// the cases, and a page cached by one must not be a hit in the next.
	calls := map[string]func(ctx context.Context, c *Store, sym string) error{
		"eod": func(ctx context.Context, c *Store, sym string) error {
			_, err := c.EncodedEOD(ctx, query(sym))
			return err
		},
		"tickers": func(ctx context.Context, c *Store, sym string) error {
			_, err := c.Tickers(ctx, marketdata.TickerQuery{Symbols: []string{sym}, Limit: 10})
			return err
		},
	}
	n := 0
	for cname, newCache := range caches {
		for callName, call := range calls {
			n++
			sym := "SYM" + strconv.Itoa(n)
			t.Run(cname+"/"+callName, func(t *testing.T) {
				inner := &ctxStore{countingStore: countingStore{gate: make(chan struct{})}, started: make(chan struct{})}
				c := newCache(inner)
				ctxA, cancelA := context.WithCancel(context.Background())
				errA := make(chan error, 1)
				go func() { errA <- call(ctxA, c, sym) }()
				select {
				case <-inner.started:
				case err := <-errA:
					t.Fatalf("the first caller never reached the store: %v", err)
				}
				errB := make(chan error, 1)
				go func() { errB <- call(context.Background(), c, sym) }()
				// B has joined A's query once two misses are counted (the
				// tickers path counts none; there B simply arrives later).
				for callName != "tickers" && testutil.ToFloat64(c.metrics.misses) < 2 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				cancelA()
				if err := <-errA; !errors.Is(err, context.Canceled) {
					t.Errorf("the caller who gave up got %v, want its own context.Canceled", err)
				}
				close(inner.gate)
				if err := <-errB; err != nil {
					t.Errorf("the caller who waited got %v after another caller gave up", err)
				}
			})
		}
	}
}

// TestSharedWorkHasItsOwnDeadline: detached from its callers, the shared
// query is still bounded, by the cache's own query timeout.
func TestSharedWorkHasItsOwnDeadline(t *testing.T) {
	inner := &ctxStore{countingStore: countingStore{gate: make(chan struct{})}, started: make(chan struct{})}
	c := NewLocal(inner, at(0), 16, Options{Registry: prometheus.NewRegistry(), QueryTimeout: 50 * time.Millisecond})
	_, err := c.EncodedEOD(context.Background(), query("GOOG"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a shared query that never ends gave %v, want context.DeadlineExceeded", err)
	}
}

// endingStore is a ctxStore that reports how each EOD query ended.
type endingStore struct {
	ctxStore
	ended chan error
}

func (s *endingStore) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	p, err := s.ctxStore.EOD(ctx, q)
	s.ended <- err
	return p, err
}

// TestSharedWorkEndsWhenNoCallerWaits: the shared query outlives a caller
// who gives up while others wait, but once every caller has gone it is
// cancelled, not left to load the database until its own deadline; and a
// caller coming after that starts a query of its own rather than join the
// cancelled one.
func TestSharedWorkEndsWhenNoCallerWaits(t *testing.T) {
	inner := &endingStore{ctxStore: ctxStore{countingStore: countingStore{gate: make(chan struct{})}, started: make(chan struct{})},
		ended: make(chan error, 2)}
	c := NewLocal(inner, at(0), 16, Options{Registry: prometheus.NewRegistry(), QueryTimeout: time.Minute})
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { _, err := c.EncodedEOD(ctxA, query("GOOG")); errA <- err }()
	<-inner.started
	go func() { _, err := c.EncodedEOD(ctxB, query("GOOG")); errB <- err }()
	for testutil.ToFloat64(c.metrics.misses) < 2 {
		time.Sleep(time.Millisecond)
	}
	cancelA()
	<-errA
	select {
	case err := <-inner.ended:
		t.Fatalf("the shared query ended (%v) while a caller still waited", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancelB()
	<-errB
	select {
	case err := <-inner.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned query ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the shared query ran on after every caller had gone")
	}
	close(inner.gate)
	if _, err := c.EncodedEOD(context.Background(), query("GOOG")); err != nil {
		t.Fatalf("a caller after the cancelled query got %v", err)
	}
}
