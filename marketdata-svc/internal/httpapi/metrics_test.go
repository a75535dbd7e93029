package httpapi_test

import (
	"fmt"
	"io"
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
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// TestMetricLabelsStayBounded is the regression case of the audit's
// unbounded labels (issue 12, item 1) and of their class: no part of a
// request a client chooses (method, path, query, headers, a wrong key) may
// add series to /metrics.
func TestMetricLabelsStayBounded(t *testing.T) {
	store := &fakeStore{keys: map[auth.Hash]auth.Principal{}}
	store.eod = func(marketdata.EODQuery) (marketdata.EODPage, error) { return marketdata.EODPage{}, nil }
	key := newKey(t, store, auth.Principal{KeyID: "k1", Scopes: []string{"eod", "tickers"}})
	srv, err := httpapi.NewServer(httpapi.Options{
		Store:    store,
		Auth:     auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store}),
		Limiter:  ratelimit.NewLocal(nil, time.Now),
		Logger:   slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Registry: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	send := func(method, target string, hdr ...string) {
		t.Helper()
		r, err := http.NewRequest(method, ts.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := ts.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	scrape := func() string {
		t.Helper()
		resp, err := ts.Client().Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for _, target := range []string{"/v1/eod?symbols=GOOG&access_key=" + key, "/v1/tickers/GOOG?access_key=" + key, "/nowhere", "/v1/eod"} {
		send(http.MethodGet, target)
	}
	send(http.MethodDelete, "/v1/eod")
	before := scrape()

	for i := range 500 {
		method := fmt.Sprintf("M%d%s", i, strings.Repeat("X", 2000))
		targets := []string{"/v1/eod", fmt.Sprintf("/made/up/%d/%s", i, strings.Repeat("p", 500)),
			fmt.Sprintf("/v1/eod?symbols=S%d&access_key=%s", i, key), fmt.Sprintf("/v1/tickers/T%d/eod/%d", i, i)}
		for _, m := range []string{method, "get", http.MethodGet} {
			send(m, targets[i%len(targets)], fmt.Sprintf("X-Junk-%d", i), strings.Repeat("h", 100))
		}
	}
	after := scrape()

	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "http_requests_total{") {
			continue
		}
		i := strings.Index(line, `method="`)
		m := line[i+8:]
		m = m[:strings.IndexByte(m, '"')]
		switch m {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "OTHER":
		default:
			t.Errorf("method label %.40q is not one of the fixed set", m)
		}
	}
	if grew := len(after) - len(before); grew > 8<<10 {
		t.Errorf("/metrics grew by %d bytes (from %d) after 1,500 hostile requests", grew, len(before))
	}
}
