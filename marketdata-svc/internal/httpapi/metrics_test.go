package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/telemetrytest"
)

// TestMetricLabelsStayBounded is the regression case of the audit's
// unbounded labels and of their class: no part of a
// request a client chooses (method, path, query, headers, a wrong key) may
// add series to /metrics.
func TestMetricLabelsStayBounded(t *testing.T) {
	store := newFakeStore(func(marketdata.EODQuery) (marketdata.EODPage, error) { return marketdata.EODPage{}, nil })
	key := newKey(t, store, auth.Principal{KeyID: "k1", Scopes: []string{"eod", "tickers"}})
	srv, _ := newServer(t, store)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	warm := []struct{ method, target string }{
		{http.MethodGet, "/v1/eod?symbols=GOOG&access_key=" + key},
		{http.MethodGet, "/v1/tickers/GOOG?access_key=" + key},
		{http.MethodGet, "/nowhere"},
		{http.MethodGet, "/v1/eod"},
		{http.MethodDelete, "/v1/eod"},
	}
	for _, w := range warm {
		r, err := http.NewRequest(w.method, ts.URL+w.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ts.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	telemetrytest.LabelsStayBounded(t, ts.Client(), ts.URL, func(i int) (string, http.Header) {
		targets := []string{"/v1/eod", fmt.Sprintf("/made/up/%d/%s", i, strings.Repeat("p", 500)),
			fmt.Sprintf("/v1/eod?symbols=S%d&access_key=%s", i, key), fmt.Sprintf("/v1/tickers/T%d/eod/%d", i, i)}
		return targets[i%len(targets)], http.Header{fmt.Sprintf("X-Junk-%d", i): {strings.Repeat("h", 100)}}
	})
}
