package httpapi_test

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
)

// client is a marketdataclient of a real HTTP server in front of e.srv.
// The server answers through doc.do, which checks every answer against the
// OpenAPI document as it does for the raw-HTTP tests.
func (e *e2e) client(t *testing.T, key string) *marketdataclient.Client {
	t.Helper()
	return newClient(t, e, key, marketdataclient.New)
}

// clientV2 is client for /v2.
func (e *e2e) clientV2(t *testing.T, key string) *marketdataclient.V2 {
	t.Helper()
	return newClient(t, e, key, marketdataclient.NewV2)
}

// newClient is a client made by open (the v1 or the v2 constructor) of a
// new clientServer, sending key.
func newClient[C any](t *testing.T, e *e2e, key string, open func(string, ...marketdataclient.Option) (C, error)) C {
	t.Helper()
	hs := e.clientServer(t)
	c, err := open(hs.URL, marketdataclient.WithAccessKey(key), marketdataclient.WithHTTPClient(hs.Client()))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	return c
}

// clientServer is a real HTTP server in front of e.srv whose answers go
// through doc.do.
func (e *e2e) clientServer(t *testing.T) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// doc.do replays a GET; the client is read-only, as is the API.
		if r.Method != http.MethodGet {
			t.Errorf("the client sent %s %s", r.Method, r.URL.Path)
		}
		var header []string
		for k := range r.Header {
			header = append(header, k, r.Header.Get(k))
		}
		rec := e.doc.do(t, e.srv, r.URL.RequestURI(), header...)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(hs.Close)
	return hs
}

func TestEndToEndClient(t *testing.T) {
	ctx := t.Context()
	e := newE2E(t)
	c := e.client(t, e.key)

	t.Run("pages over every record", func(t *testing.T) {
		var got []string
		var goog marketdataclient.EOD
		for r, err := range c.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG", "GSPC.INDX"}, DateTo: "2008-10-14", Limit: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r.Date.Format(time.DateOnly)+" "+r.Symbol)
			if r.Symbol == "GOOG" && r.Date.Equal(day("2008-10-14")) {
				goog = r
			}
			if r.Symbol == "GSPC.INDX" && (r.AdjHigh != nil || r.AdjClose != r.Close) {
				t.Errorf("index record %+v: adjusted values should be null, adj_close the close", r)
			}
		}
		// Five days of two symbols, newest first, in pages of 3: four requests.
		var want []string
		for _, d := range []string{"2008-10-14", "2008-10-13", "2008-10-10", "2008-10-09", "2008-10-08"} {
			want = append(want, d+" GOOG", d+" GSPC.INDX")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("records %v, want %v", got, want)
		}
		if goog.Close != 362.71 || goog.Open != 393.53 || goog.High != 394.50 || goog.Low != 357.00 || goog.Volume != 7784800 || goog.Exchange != "XNAS" {
			t.Fatalf("GOOG on 2008-10-14: %+v", goog)
		}
	})

	t.Run("ascending with a date range", func(t *testing.T) {
		var got []string
		for r, err := range c.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"goog"}, DateFrom: "2008-10-09", DateTo: "2008-10-13", Sort: "ASC", Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %.2f", r.Date.Format(time.DateOnly), r.Close))
		}
		if want := []string{"2008-10-09 328.98", "2008-10-10 332.00", "2008-10-13 381.02"}; !slices.Equal(got, want) {
			t.Fatalf("records %v, want %v", got, want)
		}
	})

	t.Run("typed errors", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			client *marketdataclient.Client
			p      marketdataclient.EODParams
			status int
			code   string
		}{
			{"invalid symbol", c, marketdataclient.EODParams{Symbols: []string{"NOPE", "ALSO.NOPE"}}, 422, "no_valid_symbols_provided"},
			{"malformed symbol", c, marketdataclient.EODParams{Symbols: []string{"GOOG' OR 1=1--"}}, 422, "validation_error"},
			{"dates reversed", c, marketdataclient.EODParams{Symbols: []string{"GOOG"}, DateFrom: "2008-10-14", DateTo: "2008-10-13"}, 422, "validation_error"},
			{"revoked key", e.client(t, e.keys["revoked"]), marketdataclient.EODParams{Symbols: []string{"GOOG"}}, 401, "invalid_access_key"},
			{"key without the eod scope", e.client(t, e.keys["tickers"]), marketdataclient.EODParams{Symbols: []string{"GOOG"}}, 403, "function_access_restricted"},
		} {
			var err error
			for _, e := range tc.client.EOD(ctx, tc.p) {
				if e != nil {
					err = e
				}
			}
			var me *marketdataclient.Error
			if !errors.As(err, &me) || me.Status != tc.status || me.Code != tc.code {
				t.Errorf("%s: %v, want %d %s", tc.name, err, tc.status, tc.code)
				continue
			}
			if strings.Contains(err.Error(), e.keys["revoked"]) || strings.Contains(err.Error(), e.keys["tickers"]) || strings.Contains(err.Error(), e.key) {
				t.Errorf("%s: error %q quotes an access key", tc.name, err)
			}
		}
	})
}

// TestEndToEndClientV2 drives the /v2 client's wrappers against the demo
// data: each decodes what the server answers, pages join, and errors
// carry v2's codes.
func TestEndToEndClientV2(t *testing.T) {
	ctx := t.Context()
	e := demoE2E(t)
	c := e.clientV2(t, e.key)
	var eod []string
	for r, err := range c.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, DateFrom: "2008-10-10", DateTo: "2008-10-14", Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		eod = append(eod, fmt.Sprintf("%s %.2f", r.Date.Format(time.DateOnly), r.Close))
	}
	if want := []string{"2008-10-14 362.71", "2008-10-13 381.02", "2008-10-10 332.00"}; !slices.Equal(eod, want) {
		t.Errorf("eod %v, want %v", eod, want)
	}
	var bars int
	var last marketdataclient.IntradayBar
	for b, err := range c.Intraday(ctx, marketdataclient.IntradayParams{Symbols: []string{"GOOG"}, Interval: "1min", DateFrom: "2008-10-14 13:30", DateTo: "2008-10-14 13:34", Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		bars, last = bars+1, b
	}
	if bars != 5 || last.Date != time.Date(2008, 10, 14, 13, 30, 0, 0, time.UTC) || last.Exchange != "XNAS" {
		t.Errorf("intraday: %d bars, last %+v", bars, last)
	}
	var tickers []string
	for tk, err := range c.Tickers(ctx, marketdataclient.TickersParams{Search: "alpha", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		tickers = append(tickers, tk.Ticker+"@"+tk.ExchangeMIC)
	}
	if !slices.Contains(tickers, "GOOG@XNAS") {
		t.Errorf("tickers %v, want GOOG@XNAS among them", tickers)
	}
	if info, err := c.TickerInfo(ctx, "GOOG"); err != nil || info.Name != "Alphabet Inc. Class C" || info.Sector != nil {
		t.Errorf("ticker info: %+v %v", info, err)
	}
	if p, err := c.StockPrice(ctx, "GOOG"); err != nil || p.Price == "" || p.Ticker != "GOOG" {
		t.Errorf("stock price: %+v %v", p, err)
	}
	var indices []string
	for x, err := range c.IndexList(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		indices = append(indices, x)
	}
	if !slices.Contains(indices, "GSPC.INDX") {
		t.Errorf("index list %v", indices)
	}
	if x, err := c.IndexInfo(ctx, "GSPC.INDX"); err != nil || x.Benchmark != "GSPC.INDX" || x.Price == "" {
		t.Errorf("index info: %+v %v", x, err)
	}
	_, err := c.TickerInfo(ctx, "NOPE")
	var me *marketdataclient.Error
	if !errors.As(err, &me) || me.Status != 404 || me.Code != "404_not_found" {
		t.Errorf("unknown ticker: %v", err)
	}
}
