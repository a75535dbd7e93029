package httpapi_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// fakeStore is a stand-in for the layer below, for the HTTP layer's own
// behaviour; the real store is exercised by the end-to-end tests.
type fakeStore struct {
	marketdata.Store
	keys map[auth.Hash]auth.Principal
	eod  func(q marketdata.EODQuery) (marketdata.EODPage, error)
}

func (f *fakeStore) LookupKey(_ context.Context, h auth.Hash) (auth.Principal, error) {
	p, ok := f.keys[h]
	if !ok {
		return auth.Principal{}, auth.ErrKeyNotFound
	}
	return p, nil
}

func (f *fakeStore) EOD(_ context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	return f.eod(q)
}

func (f *fakeStore) Ticker(_ context.Context, sym string) (marketdata.Ticker, error) {
	switch sym {
	case "PANIC":
		panic("boom")
	case "GOOG":
		return marketdata.Ticker{Symbol: "GOOG", Name: "Alphabet", HasEOD: true}, nil
	}
	return marketdata.Ticker{}, marketdata.ErrNotFound
}

func newFakeStore(eod func(q marketdata.EODQuery) (marketdata.EODPage, error)) *fakeStore {
	return &fakeStore{keys: map[auth.Hash]auth.Principal{}, eod: eod}
}

// newServer returns a server on store and the JSON log it writes. Its
// rate limiter's clock stands still, so that no window rolls over mid-test
// and a limit or quota is reached exactly when the test says.
func newServer(t *testing.T, store *fakeStore) (*httpapi.Server, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	fixed := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	srv, err := httpapi.NewServer(httpapi.Options{
		Store:     store,
		Auth:      auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store}),
		Limiter:   ratelimit.NewLocal(nil, func() time.Time { return fixed }),
		Logger:    slog.New(slog.NewJSONHandler(logs, nil)),
		AccessLog: accesslog.New(logs, nil),
		Registry:  prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, logs
}

func newKey(t *testing.T, store *fakeStore, p auth.Principal) string {
	t.Helper()
	key, hash, err := auth.Generate(auth.MarketDataPrefix)
	if err != nil {
		t.Fatal(err)
	}
	store.keys[hash] = p
	return key
}

func TestServerBehaviour(t *testing.T) {
	bar := marketdata.Bar{Symbol: "GOOG", Date: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC), Close: 362.71, SplitFactor: 1, Name: "Alphabet", Exchange: "XNAS", ExchangeCode: "NASDAQ", AssetType: "Stock", PriceCurrency: "USD"}
	store := newFakeStore(func(q marketdata.EODQuery) (marketdata.EODPage, error) {
		switch q.Symbols[0] {
		case "NONE":
			return marketdata.EODPage{}, marketdata.ErrNoValidSymbols
		case "DOWN":
			return marketdata.EODPage{}, errors.New("dial tcp: connection refused: " + marketdata.ErrUnavailable.Error())
		case "SLOW":
			return marketdata.EODPage{}, context.DeadlineExceeded
		}
		return marketdata.EODPage{Bars: []marketdata.Bar{bar}, Total: 1}, nil
	})
	all := []string{"eod", "tickers", "exchanges", "splits", "dividends"}
	key := newKey(t, store, auth.Principal{KeyID: "k1", Scopes: all})
	tickersOnly := newKey(t, store, auth.Principal{KeyID: "k2", Scopes: []string{"tickers"}})
	limited := newKey(t, store, auth.Principal{KeyID: "k3", Scopes: all, RatePerSecond: 2})
	quota := newKey(t, store, auth.Principal{KeyID: "k4", Scopes: all, MonthlyQuota: 1})

	srv, logs := newServer(t, store)
	doc := loadDoc(t)

	type errBody struct {
		Error struct {
			Code    string
			Context map[string][]struct{ Key, Message string }
		}
	}
	cases := []struct {
		name, target string
		header       []string
		status       int
		code         string
	}{
		{"missing key", "/v1/eod?symbols=GOOG", nil, 401, "missing_access_key"},
		{"malformed key", "/v1/eod?symbols=GOOG&access_key=nope", nil, 401, "invalid_access_key"},
		{"unknown key", "/v1/eod?symbols=GOOG&access_key=" + strings.Repeat("x", 10), nil, 401, "invalid_access_key"},
		{"duplicate key", "/v1/eod?symbols=GOOG&access_key=" + key + "&access_key=" + key, nil, 401, "invalid_access_key"},
		{"scope", "/v1/eod?symbols=GOOG&access_key=" + tickersOnly, nil, 403, "function_access_restricted"},
		{"unknown path", "/v1/realtime?access_key=" + key, nil, 404, "invalid_api_function"},
		{"intraday is not in the plan", "/v1/intraday?access_key=" + key, nil, 403, "function_access_restricted"},
		{"unknown ticker", "/v1/tickers/ZZZZ?access_key=" + key, nil, 404, "404_not_found"},
		{"impossible symbol", "/v1/tickers/A%20B?access_key=" + key, nil, 404, "404_not_found"},
		{"encoded slash in a path id", "/v1/tickers/GOOG%2Feod?access_key=" + key, nil, 404, "404_not_found"},
		{"encoded slash before latest", "/v1/tickers/GOOG%2Feod%2Flatest?access_key=" + key, nil, 404, "404_not_found"},
		{"no valid symbols", "/v1/eod?symbols=NONE&access_key=" + key, nil, 422, "no_valid_symbols_provided"},
		{"store down", "/v1/eod?symbols=SLOW&access_key=" + key, nil, 503, "service_unavailable"},
		{"unexpected error", "/v1/eod?symbols=DOWN&access_key=" + key, nil, 500, "internal_error"},
		{"panic", "/v1/tickers/PANIC?access_key=" + key, nil, 500, "internal_error"},
		{"semicolon", "/v1/eod?symbols=GOOG;DROP&access_key=" + key, nil, 422, "validation_error"},
		{"bearer", "/v1/eod?symbols=goog", []string{"Authorization", "Bearer " + key}, 200, ""},
	}
	for _, c := range cases {
		rec := doc.do(t, srv, c.target, c.header...)
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, rec.Code, c.status, rec.Body)
			continue
		}
		if c.code != "" {
			if got := decode[errBody](t, rec).Error.Code; got != c.code {
				t.Errorf("%s: code %q, want %q", c.name, got, c.code)
			}
		}
	}
	if !strings.Contains(logs.String(), `"panic":"boom"`) {
		t.Errorf("panic not logged: %s", logs)
	}

	t.Run("validation lists each parameter once", func(t *testing.T) {
		rec := doc.do(t, srv, "/v1/eod?access_key="+key+"&symbols=A%3BB&limit=5000&offset=-1&date_from=2020-02-30&sort=sideways&symbols=C")
		if rec.Code != 422 {
			t.Fatalf("status %d", rec.Code)
		}
		ctx := decode[errBody](t, rec).Error.Context
		for _, p := range []string{"symbols", "limit", "offset", "date_from", "sort"} {
			if len(ctx[p]) != 1 {
				t.Errorf("context[%s] = %v", p, ctx[p])
			}
		}
		if len(ctx) != 5 {
			t.Errorf("context %v", ctx)
		}
	})

	t.Run("method not allowed", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/v1/eod?access_key="+key, nil)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != 405 || rec.Header().Get("Allow") != "GET" || decode[errBody](t, rec).Error.Code != "invalid_api_function" {
			t.Errorf("POST: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
	})

	t.Run("etag", func(t *testing.T) {
		rec := doc.do(t, srv, "/v1/eod?symbols=goog&access_key="+key)
		etag := rec.Header().Get("ETag")
		if rec.Code != 200 || len(etag) != 18 || rec.Header().Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("%d %v", rec.Code, rec.Header())
		}
		rec = doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+key, "If-None-Match", `"x", W/`+etag)
		if rec.Code != 304 || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag {
			t.Errorf("revalidation: %d %q", rec.Code, rec.Body)
		}
		rec = doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+key, "If-None-Match", `"0000000000000000"`)
		if rec.Code != 200 {
			t.Errorf("other etag: %d", rec.Code)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		for i := range 2 {
			rec := doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+limited)
			if rec.Code != 200 || rec.Header().Get("X-RateLimit-Limit") != "2" || rec.Header().Get("RateLimit-Policy") != `"second";q=2;w=1` {
				t.Fatalf("request %d: %d %v", i, rec.Code, rec.Header())
			}
		}
		rec := doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+limited)
		if rec.Code != 429 || decode[errBody](t, rec).Error.Code != "rate_limit_reached" || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("third request: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		rec = doc.do(t, srv, "/v2/eod?symbols=GOOG&access_key="+limited)
		if rec.Code != 429 || decode[errBody](t, rec).Error.Code != "rate_limit_reached" {
			t.Errorf("v2: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("quota", func(t *testing.T) {
		rec := doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+quota)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("RateLimit"), `"month";r=0;t=`) {
			t.Fatalf("first: %d %v", rec.Code, rec.Header())
		}
		rec = doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+quota)
		if rec.Code != 429 || decode[errBody](t, rec).Error.Code != "usage_limit_reached" || rec.Header().Get("Retry-After") == "" {
			t.Errorf("second: %d %v", rec.Code, rec.Header())
		}
		// v2 names the spent quota with marketstack v2's code.
		rec = doc.do(t, srv, "/v2/eod?symbols=GOOG&access_key="+quota)
		if rec.Code != 429 || decode[errBody](t, rec).Error.Code != "too_many_requests" || rec.Header().Get("Retry-After") == "" {
			t.Errorf("v2: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
	})

	t.Run("limit headers follow each key", func(t *testing.T) {
		// The limit-only header values are kept for the last limits seen:
		// keys with other limits, interleaved, must each get their own.
		for i := range 3 {
			rec := doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+limited)
			if rec.Header().Get("RateLimit-Policy") != `"second";q=2;w=1` || rec.Header().Get("X-RateLimit-Limit") != "2" {
				t.Fatalf("limited key, round %d: %v", i, rec.Header())
			}
			rec = doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+quota)
			if p := rec.Header().Get("RateLimit-Policy"); !strings.HasPrefix(p, `"month";q=`) || strings.Contains(p, "second") || rec.Header().Get("X-RateLimit-Limit") != "" {
				t.Fatalf("quota key, round %d: %v", i, rec.Header())
			}
		}
	})

	t.Run("request id and redacted access log", func(t *testing.T) {
		rec := doc.do(t, srv, "/v1/eod?symbols=GOOG&access_key="+key, "X-Request-ID", "abc-123")
		if rec.Header().Get("X-Request-ID") != "abc-123" {
			t.Errorf("request id not echoed: %v", rec.Header())
		}
		rec = doc.do(t, srv, "/healthz", "X-Request-ID", strings.Repeat("x", 129))
		if id := rec.Header().Get("X-Request-ID"); id == "" || len(id) > 128 {
			t.Errorf("bad request id kept: %q", id)
		}
		out := logs.String()
		for _, k := range []string{key, tickersOnly, limited, quota} {
			if strings.Contains(out, k) || strings.Contains(out, k[4:20]) {
				t.Fatalf("access log leaks a key:\n%s", out)
			}
		}
		if !strings.Contains(out, `"request_id":"abc-123"`) || !strings.Contains(out, "access_key=REDACTED") {
			t.Errorf("access log lacks request id or redaction:\n%s", out)
		}
	})

	t.Run("operations", func(t *testing.T) {
		if rec := doc.do(t, srv, "/readyz"); rec.Code != 200 {
			t.Errorf("readyz %d", rec.Code)
		}
		srv.SetShuttingDown()
		if rec := doc.do(t, srv, "/readyz"); rec.Code != 503 {
			t.Errorf("readyz while shutting down %d", rec.Code)
		}
		if rec := doc.do(t, srv, "/v1/openapi.json"); rec.Code != 200 {
			t.Errorf("openapi %d", rec.Code)
		}
		rec := doc.do(t, srv, "/metrics")
		if !strings.Contains(rec.Body.String(), `http_requests_total{method="GET",route="/v1/eod",status="200"}`) {
			t.Errorf("metrics lack the request counter")
		}
	})
}

// TestValidatorRejectsWrongResponse proves the OpenAPI check has teeth.
func TestValidatorRejectsWrongResponse(t *testing.T) {
	doc := loadDoc(t)
	req := httptest.NewRequest(http.MethodGet, "http://localhost:8081/v1/eod?symbols=A", nil)
	for _, body := range []string{
		`{"pagination":{"limit":100,"offset":0,"count":1,"total":1},"data":[{"symbol":"A"}]}`,
		`{"error":{"code":"made_up","message":"x","context":{}}}`,
		`{"pagination":{"limit":100,"offset":0,"count":0,"total":0},"data":[],"extra":1}`,
	} {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(200)
		rec.WriteString(body)
		if doc.check(req, rec) == nil {
			t.Errorf("validator accepted %s", body)
		}
	}
	// The v2 document is held to as strictly: v1's ticker shape is not v2's.
	req = httptest.NewRequest(http.MethodGet, "http://localhost:8081/v2/tickerslist", nil)
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(200)
	rec.WriteString(`{"pagination":{"limit":100,"offset":0,"count":1,"total":1},"data":[{"name":"A","symbol":"A","has_intraday":false,"has_eod":true,"stock_exchange":null}]}`)
	if doc.check(req, rec) == nil {
		t.Errorf("v2 validator accepted a v1 ticker")
	}
}
