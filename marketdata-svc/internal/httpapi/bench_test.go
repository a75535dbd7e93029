package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/cache"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// benchStore is a fixed data version and a fixed 100-record page: after
// the first request every EOD request is a cache hit.
type benchStore struct {
	fakeStore
	page marketdata.EODPage
}

// fixedVersion is a data version that never changes.
type fixedVersion int64

func (v fixedVersion) Current() (int64, bool) { return int64(v), true }

func (s *benchStore) EOD(context.Context, marketdata.EODQuery) (marketdata.EODPage, error) {
	return s.page, nil
}

// BenchmarkEODCacheHit is the whole HTTP path of a cache hit through the
// router (request id, access log, metrics, auth, limits, ETag), with an
// in-process cache and limiter, so it measures the service's own cost
// without any network round trip.
func BenchmarkEODCacheHit(b *testing.B) {
	store := &benchStore{fakeStore: fakeStore{keys: map[auth.Hash]auth.Principal{}}}
	day := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		sym := []string{"SYN000001", "SYN000002"}[i%2]
		f := 100 + float64(i)*0.37
		store.page.Bars = append(store.page.Bars, marketdata.Bar{Symbol: sym, Date: day.AddDate(0, 0, -i/2), Open: f, High: f + 1, Low: f - 1, Close: f,
			Volume: 1e6, AdjOpen: f, AdjHigh: f + 1, AdjLow: f - 1, AdjClose: f, AdjVolume: 1e6, SplitFactor: 1, Name: "Synthetic",
			ExchangeCode: "NASDAQ", Exchange: "XNAS", AssetType: "Stock", PriceCurrency: "USD"})
	}
	store.page.Total = 12_000
	key, hash, err := auth.Generate(auth.MarketDataPrefix)
	if err != nil {
		b.Fatal(err)
	}
	store.keys[hash] = auth.Principal{AccountID: "bench", KeyID: "k1", Scopes: []string{"eod", "tickers"}, RatePerSecond: 1_000_000_000, MonthlyQuota: 1 << 60}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	access := accesslog.New(io.Discard, nil)
	cached := cache.NewLocal(store, fixedVersion(1), 100, cache.Options{Registry: reg})
	srv, err := httpapi.NewServer(httpapi.Options{
		Store: cached, EODPages: cached, Limiter: ratelimit.NewLocal(reg, nil), Logger: log, AccessLog: access, Registry: reg,
		Auth: auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store, CacheTTL: time.Minute}),
	})
	if err != nil {
		b.Fatal(err)
	}
	target := "/v1/eod?access_key=" + key + "&symbols=SYN000001,SYN000002&limit=100"
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("status %d: %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		w := discardWriter{h: http.Header{}}
		// The request is reused: parsing it is net/http's cost, not ours.
		srv.ServeHTTP(&w, req)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body, so the benchmark measures the handler rather than a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}
