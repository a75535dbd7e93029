package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/cache"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/dataversion"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/replicas"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// seed loads real prices from ../shared/data (GOOG and the S&P 500 around
// the acceptance date, MSFT in 2003) and real corporate actions.
func seed(t *testing.T, store *testenv.Stores) {
	t.Helper()
	row := func(sym, d string, o, h, l, c, v float64) ingest.BarRow {
		return ingest.BarRow{Symbol: sym, Date: day(d), Open: o, High: h, Low: l, Close: c, Volume: v}
	}
	bars := []ingest.BarRow{
		row("GOOG", "2008-10-08", 330.16, 358.99, 326.11, 338.11, 11826400),
		row("GOOG", "2008-10-09", 344.52, 348.57, 321.67, 328.98, 8075000),
		row("GOOG", "2008-10-10", 313.16, 341.89, 310.30, 332.00, 10597800),
		row("GOOG", "2008-10-13", 355.79, 381.95, 345.75, 381.02, 8905500),
		row("GOOG", "2008-10-14", 393.53, 394.50, 357.00, 362.71, 7784800),
		row("GSPC.INDX", "2008-10-08", 988.909973, 1021.059998, 970.969971, 984.940002, 8716330000),
		row("GSPC.INDX", "2008-10-09", 988.419983, 1005.250000, 909.190002, 909.919983, 6819000000),
		row("GSPC.INDX", "2008-10-10", 902.309998, 936.359985, 839.799988, 899.219971, 11456230000),
		row("GSPC.INDX", "2008-10-13", 912.750000, 1006.929993, 912.750000, 1003.349976, 7263370000),
		row("GSPC.INDX", "2008-10-14", 1009.969971, 1044.310059, 972.070007, 998.010010, 8161990000),
		row("MSFT", "2003-06-19", 26.09, 26.39, 26.01, 26.07, 63626900),
		row("MSFT", "2003-06-20", 26.34, 26.38, 26.01, 26.33, 86048896),
	}
	load := ingest.Load{
		Exchanges: []marketdata.Exchange{
			{MIC: "XNAS", Name: "NASDAQ Stock Exchange", Acronym: "NASDAQ", CountryCode: "US", Country: "USA", City: "New York", Website: "www.nasdaq.com", Timezone: "America/New_York", Currency: "USD"},
			{MIC: "INDX", Name: "Indices", Acronym: "INDX", CountryCode: "US", Country: "USA", City: "", Website: "", Timezone: "America/New_York", Currency: "USD"},
			{MIC: "XLON", Name: "London Stock Exchange", Acronym: "LSE", CountryCode: "GB", Country: "United Kingdom", City: "London", Website: "www.londonstockexchange.com", Timezone: "Europe/London", Currency: "GBP"},
		},
		Tickers: []ingest.TickerRow{
			{Symbol: "GOOG", Name: "Alphabet Inc. Class C", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
			{Symbol: "MSFT", Name: "Microsoft Corporation", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
			{Symbol: "GSPC.INDX", Name: "S&P 500 Index", AssetType: "Index", PriceCurrency: "USD", ExchangeMIC: "INDX"},
			{Symbol: "AAPL", Name: "Apple Inc", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
			{Symbol: "TSLA", Name: "Tesla Inc", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
			{Symbol: "NOEX", Name: "Unlisted Example", AssetType: "Stock", PriceCurrency: "USD"},
		},
		Splits: []marketdata.Split{
			{Symbol: "AAPL", Date: day("2020-08-31"), Factor: 4},
			{Symbol: "TSLA", Date: day("2020-08-31"), Factor: 5},
			{Symbol: "TSLA", Date: day("2022-08-25"), Factor: 3},
		},
		Dividends: []marketdata.Dividend{{Symbol: "MSFT", Date: day("2003-10-15"), Amount: 0.08}},
		Bars:      ingest.Bars(bars),
	}
	if _, err := store.Ingest.Apply(context.Background(), load); err != nil {
		t.Fatalf("seed: %v", err)
	}
}

type e2e struct {
	srv   *httpapi.Server
	store *testenv.Stores
	doc   *apiDoc
	logs  *logbuf.Buffer
	rdb   *redis.Client
	key   string
	keys  map[string]string
	// versions is the server's data version source.
	versions *dataversion.Source
	// router and replica are set with e2eOptions.replica.
	router  *replicas.Router
	replica *testenv.Replica
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	return newE2EWith(t, e2eOptions{seed: seed})
}

// e2eOptions vary the end-to-end server: the data it is seeded with and
// its CORS origins.
type e2eOptions struct {
	seed func(*testing.T, *testenv.Stores)
	cors []string
	// tracing, when set, traces the server, its pool and its Redis
	// client (tracing_e2e_test.go).
	tracing *tracing.Tracing
	// replica, when set, sends the reads through a replicas.Router
	// to the test environment's streaming replica (replica_e2e_test.go),
	// caught up with the seed before the server is returned.
	replica bool
}

func newE2EWith(t *testing.T, o e2eOptions) *e2e {
	t.Helper()
	cfg := config.Config{DatabaseURL: testenv.Postgres(t), DBMaxOpenConns: 4, DBMaxIdleConns: 4, StatementTimeout: 5 * time.Second}
	db, err := marketdatadb.OpenTraced(context.Background(), cfg, o.tracing.PgxTracer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := &testenv.Stores{Store: db, Reads: reads.New(db.DB()), Ingest: ingest.New(db.DB())}
	o.seed(t, store)
	rdb, err := cache.NewRedisClient(testenv.Redis(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.tracing.Enabled() {
		if err := cache.TraceRedis(rdb, o.tracing.TracerProvider()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { rdb.Close() })
	reg := prometheus.NewRegistry()
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	versions := dataversion.NewRedis(rdb, store.DataVersion, dataversion.Options{Logger: log})
	if err := versions.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); versions.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	var dbReads marketdata.Store = store.Reads
	var router *replicas.Router
	var replica *testenv.Replica
	if o.replica {
		router, replica = startReplicas(t, cfg, store, versions, log)
		dbReads = router
	}
	cached := cache.NewRedis(dbReads, rdb, versions, cache.Options{TTL: time.Minute, Timeout: time.Second, Logger: log, Registry: reg})
	srv, err := httpapi.NewServer(httpapi.Options{
		Store:       cached,
		EODPages:    cached,
		Auth:        auth.NewAuthenticator(auth.Options{Prefix: auth.MarketDataPrefix, Store: store}),
		Limiter:     ratelimit.NewRedis(rdb, ratelimit.RedisOptions{Timeout: time.Second, Logger: log, Registry: reg}),
		Ping:        store.Ping,
		CacheStatus: cached.Status,
		Logger:      log,
		AccessLog:   accesslog.New(logs, nil),
		Registry:    reg,
		CORSOrigins: o.cors,
		Trace:       o.tracing.Middleware(),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{srv: srv, store: store, doc: loadDoc(t), logs: logs, rdb: rdb, keys: map[string]string{},
		versions: versions, router: router, replica: replica}
	for name, opts := range map[string]keystore.KeyOptions{
		"main":    {},
		"tickers": {Scopes: []string{"tickers"}},
		"rate":    {RatePerSecond: 2},
		"quota":   {MonthlyQuota: 2},
		"revoked": {},
	} {
		meta, key, err := store.CreateKey(context.Background(), "acct-"+name, opts)
		if err != nil {
			t.Fatal(err)
		}
		if name == "revoked" {
			if err := store.RevokeKey(context.Background(), meta.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		e.keys[name] = key
	}
	e.key = e.keys["main"]
	return e
}

func (e *e2e) get(t *testing.T, path string, params url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	if params == nil {
		params = url.Values{}
	}
	if !params.Has("access_key") {
		params.Set("access_key", e.key)
	}
	target := path + "?" + params.Encode()
	return e.doc.do(t, e.srv, target, header...)
}

type eodRec struct {
	Open, High, Low, Close, Volume float64
	AdjClose                       float64 `json:"adj_close"`
	SplitFactor                    float64 `json:"split_factor"`
	Name, Symbol, Exchange, Date   string
	ExchangeCode                   string `json:"exchange_code"`
	AssetType                      string `json:"asset_type"`
	PriceCurrency                  string `json:"price_currency"`
}

type page[T any] struct {
	Pagination struct{ Limit, Offset, Count, Total int }
	Data       T
}

type apiErr struct {
	Error struct {
		Code    string
		Context map[string][]struct{ Key, Message string }
	}
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func TestEndToEnd(t *testing.T) { testEndToEnd(t, newE2E(t)) }

// testEndToEnd is the end-to-end suite, run on the primary alone
// (TestEndToEnd) and with reads on a streaming replica
// (TestEndToEndOnReplica).
func testEndToEnd(t *testing.T, e *e2e) {

	t.Run("acceptance query", func(t *testing.T) {
		rec := e.get(t, "/v1/eod", vals("symbols", "GOOG,GSPC.INDX", "date_to", "2008-10-14", "limit", "4"))
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		p := decode[page[[]eodRec]](t, rec)
		got := []string{}
		for _, r := range p.Data {
			got = append(got, r.Date[:10]+" "+r.Symbol)
		}
		want := []string{"2008-10-14 GOOG", "2008-10-14 GSPC.INDX", "2008-10-13 GOOG", "2008-10-13 GSPC.INDX"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("records %v, want %v", got, want)
		}
		if p.Pagination.Limit != 4 || p.Pagination.Offset != 0 || p.Pagination.Count != 4 || p.Pagination.Total != 10 {
			t.Errorf("pagination %+v, want total 10 over both symbols", p.Pagination)
		}
		g := p.Data[0]
		if g.Close != 362.71 || g.Open != 393.53 || g.Volume != 7784800 || g.Date != "2008-10-14T00:00:00+0000" || g.Exchange != "XNAS" ||
			g.ExchangeCode != "NASDAQ" || g.Name != "Alphabet Inc. Class C" || g.AssetType != "Stock" || g.PriceCurrency != "USD" || g.SplitFactor != 1 || g.AdjClose != 362.71 {
			t.Errorf("GOOG record %+v", g)
		}
		if rec.Header().Get("ETag") == "" || rec.Header().Get("Cache-Control") != "private, no-cache" {
			t.Errorf("caching headers %v", rec.Header())
		}
	})

	t.Run("multi-symbol pages join without gaps or repeats", func(t *testing.T) {
		for _, sort := range []string{"DESC", "asc"} {
			full := decode[page[[]eodRec]](t, e.get(t, "/v1/eod", vals("symbols", "gspc.indx, goog ,GOOG", "sort", sort, "limit", "1000")))
			if full.Pagination.Total != 10 || len(full.Data) != 10 {
				t.Fatalf("%s: full %+v", sort, full.Pagination)
			}
			for i := 1; i < len(full.Data); i++ {
				a, b := full.Data[i-1], full.Data[i]
				if a.Date == b.Date && !(a.Symbol == "GSPC.INDX" && b.Symbol == "GOOG") {
					t.Errorf("%s: within a date the order of the request is kept: %s then %s", sort, a.Symbol, b.Symbol)
				}
				if (sort == "DESC" && a.Date < b.Date) || (sort == "asc" && a.Date > b.Date) {
					t.Errorf("%s: dates out of order: %s then %s", sort, a.Date, b.Date)
				}
			}
			var joined []eodRec
			for offset := 0; offset < 10; offset += 3 {
				p := decode[page[[]eodRec]](t, e.get(t, "/v1/eod", vals("symbols", "GSPC.INDX,GOOG", "sort", sort, "limit", "3", "offset", fmt.Sprint(offset))))
				if p.Pagination.Total != 10 || p.Pagination.Count != len(p.Data) || p.Pagination.Offset != offset {
					t.Errorf("page at %d: %+v", offset, p.Pagination)
				}
				joined = append(joined, p.Data...)
			}
			if fmt.Sprint(joined) != fmt.Sprint(full.Data) {
				t.Errorf("%s: pages do not join up to the full list", sort)
			}
		}
		p := decode[page[[]eodRec]](t, e.get(t, "/v1/eod", vals("symbols", "GOOG", "offset", "50")))
		if p.Pagination.Count != 0 || p.Pagination.Total != 5 || len(p.Data) != 0 {
			t.Errorf("past the end: %+v", p)
		}
	})

	t.Run("eod variants", func(t *testing.T) {
		p := decode[page[[]eodRec]](t, e.get(t, "/v1/eod/latest", vals("symbols", "MSFT,GOOG,NOPE")))
		// Newest first, whatever the order of the symbols.
		if len(p.Data) != 2 || p.Data[0].Symbol != "GOOG" || p.Data[0].Date[:10] != "2008-10-14" || p.Data[1].Date[:10] != "2003-06-20" {
			t.Errorf("latest %+v", p)
		}
		p = decode[page[[]eodRec]](t, e.get(t, "/v1/eod/2008-10-13", vals("symbols", "GOOG,GSPC.INDX")))
		if len(p.Data) != 2 || p.Data[0].Close != 381.02 || p.Pagination.Total != 2 {
			t.Errorf("on a date %+v", p)
		}
		p = decode[page[[]eodRec]](t, e.get(t, "/v1/eod", vals("symbols", "GOOG", "date_from", "2008-10-09T00:00:00+0000", "date_to", "2008-10-10")))
		if len(p.Data) != 2 || p.Pagination.Total != 2 {
			t.Errorf("inclusive range %+v", p)
		}
		// marketstack v2's example form names its calendar day, on both versions.
		for _, v := range []string{"v1", "v2"} {
			p = decode[page[[]eodRec]](t, e.get(t, "/"+v+"/eod", vals("symbols", "GOOG", "date_from", "2008-10-09 15:30", "date_to", "2008-10-10 09:00:00")))
			if len(p.Data) != 2 || p.Pagination.Total != 2 {
				t.Errorf("%s: range in the space form %+v", v, p)
			}
			p = decode[page[[]eodRec]](t, e.get(t, "/"+v+"/eod/2008-10-13%2015:30", vals("symbols", "GOOG")))
			if len(p.Data) != 1 || p.Data[0].Close != 381.02 {
				t.Errorf("%s: {date} in the space form %+v", v, p)
			}
		}
		p = decode[page[[]eodRec]](t, e.get(t, "/v1/eod", vals("symbols", "GOOG,GSPC.INDX", "exchange", "indx")))
		if len(p.Data) != 5 || p.Data[0].Symbol != "GSPC.INDX" {
			t.Errorf("exchange filter %+v", p.Pagination)
		}
		tp := decode[page[struct {
			Name, Symbol string
			Eod          []eodRec
		}]](t, e.get(t, "/v1/tickers/goog/eod", vals("limit", "2")))
		if tp.Data.Symbol != "GOOG" || len(tp.Data.Eod) != 2 || tp.Pagination.Total != 5 || tp.Data.Eod[0].Close != 362.71 {
			t.Errorf("ticker eod %+v", tp)
		}
		one := decode[eodRec](t, e.get(t, "/v1/tickers/GOOG/eod/latest", nil))
		if one.Close != 362.71 {
			t.Errorf("ticker latest %+v", one)
		}
		one = decode[eodRec](t, e.get(t, "/v1/tickers/GSPC.INDX/eod/2008-10-10", nil))
		if one.Close != 899.219971 || one.AssetType != "Index" {
			t.Errorf("ticker on date %+v", one)
		}
		if rec := e.get(t, "/v1/tickers/GOOG/eod/2008-10-11", nil); rec.Code != 404 {
			t.Errorf("no trading that day: %d", rec.Code)
		}
	})

	t.Run("tickers and exchanges", func(t *testing.T) {
		type ticker struct {
			Name, Symbol  string
			HasEOD        bool                                 `json:"has_eod"`
			StockExchange *struct{ Name, Acronym, MIC string } `json:"stock_exchange"`
		}
		p := decode[page[[]ticker]](t, e.get(t, "/v1/tickers", vals("symbols", "msft,goog,nope,NOEX")))
		if len(p.Data) != 3 || p.Data[0].Symbol != "MSFT" || p.Data[1].Symbol != "GOOG" || p.Data[0].StockExchange == nil || p.Data[0].StockExchange.MIC != "XNAS" || !p.Data[0].HasEOD {
			t.Errorf("tickers by symbols %+v", p)
		}
		if p.Data[2].StockExchange != nil {
			t.Errorf("unknown exchange must be null: %+v", p.Data[2])
		}
		p = decode[page[[]ticker]](t, e.get(t, "/v1/tickers", vals("search", "micro")))
		if len(p.Data) != 1 || p.Data[0].Symbol != "MSFT" {
			t.Errorf("search %+v", p)
		}
		p = decode[page[[]ticker]](t, e.get(t, "/v1/tickers", vals("exchange", "INDX")))
		if len(p.Data) != 1 || p.Data[0].Symbol != "GSPC.INDX" {
			t.Errorf("by exchange %+v", p)
		}
		if one := decode[ticker](t, e.get(t, "/v1/tickers/gspc.indx", nil)); one.Name != "S&P 500 Index" {
			t.Errorf("one ticker %+v", one)
		}
		xs := decode[page[[]struct{ MIC string }]](t, e.get(t, "/v1/exchanges", nil))
		if xs.Pagination.Total != 3 || len(xs.Data) != 3 {
			t.Errorf("exchanges %+v", xs)
		}
		xs = decode[page[[]struct{ MIC string }]](t, e.get(t, "/v1/exchanges", vals("search", "london")))
		if len(xs.Data) != 1 || xs.Data[0].MIC != "XLON" {
			t.Errorf("exchange search %+v", xs)
		}
		x := decode[struct{ MIC, City string }](t, e.get(t, "/v1/exchanges/xnas", nil))
		if x.MIC != "XNAS" || x.City != "New York" {
			t.Errorf("exchange %+v", x)
		}
		xt := decode[page[struct {
			MIC     string
			Tickers []struct{ Symbol string }
		}]](t, e.get(t, "/v1/exchanges/XNAS/tickers", nil))
		if xt.Data.MIC != "XNAS" || len(xt.Data.Tickers) != 4 || xt.Pagination.Total != 4 {
			t.Errorf("exchange tickers %+v", xt)
		}
	})

	t.Run("corporate actions", func(t *testing.T) {
		sp := decode[page[[]struct {
			Date        string
			SplitFactor float64 `json:"split_factor"`
			Symbol      string
		}]](t, e.get(t, "/v1/splits", vals("symbols", "TSLA,AAPL")))
		if sp.Pagination.Total != 3 || sp.Data[0].Date != "2022-08-25" || sp.Data[0].SplitFactor != 3 {
			t.Errorf("splits %+v", sp)
		}
		dv := decode[page[[]struct {
			Date     string
			Dividend float64
		}]](t, e.get(t, "/v1/dividends", vals("symbols", "MSFT")))
		if len(dv.Data) != 1 || dv.Data[0].Dividend != 0.08 || dv.Data[0].Date != "2003-10-15" {
			t.Errorf("dividends %+v", dv)
		}
	})

	t.Run("every error code", func(t *testing.T) {
		cases := []struct {
			path   string
			params url.Values
			status int
			code   string
		}{
			{"/v1/eod", vals("access_key", "", "symbols", "GOOG"), 401, "invalid_access_key"},
			{"/v1/eod", vals("access_key", e.keys["revoked"], "symbols", "GOOG"), 401, "invalid_access_key"},
			{"/v1/eod", vals("access_key", e.keys["tickers"], "symbols", "GOOG"), 403, "function_access_restricted"},
			{"/v1/nothing", nil, 404, "invalid_api_function"},
			{"/v1/tickers/NOPE", nil, 404, "404_not_found"},
			{"/v1/exchanges/XXXX", nil, 404, "404_not_found"},
			{"/v1/exchanges/XXXX/tickers", nil, 404, "404_not_found"},
			{"/v1/tickers/NOPE/eod", nil, 404, "404_not_found"},
			{"/v1/eod", vals("symbols", "NOPE,ALSO.NOPE"), 422, "no_valid_symbols_provided"},
			{"/v1/eod", vals("date_from", "2008-10-14", "date_to", "2008-10-13", "symbols", "GOOG"), 422, "validation_error"},
			{"/v1/eod", vals("symbols", strings.Repeat("A,", 10_000)), 422, "validation_error"},
			{"/v1/eod/2008-02-30", vals("symbols", "GOOG"), 422, "validation_error"},
			{"/v1/splits", nil, 422, "validation_error"},
			{"/v1/eod", vals("symbols", "GOOG' OR 1=1--", "limit", "1e9"), 422, "validation_error"},
			{"/v1/tickers", vals("search", "<script>\x00"), 422, "validation_error"},
		}
		for _, c := range cases {
			rec := e.get(t, c.path, c.params)
			if rec.Code != c.status || decode[apiErr](t, rec).Error.Code != c.code {
				t.Errorf("%s %v: %d %s, want %d %s", c.path, c.params, rec.Code, rec.Body, c.status, c.code)
			}
		}
		rec := e.doc.do(t, e.srv, "/v1/eod?symbols=GOOG")
		if rec.Code != 401 || decode[apiErr](t, rec).Error.Code != "missing_access_key" {
			t.Errorf("no key: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("rate limit and quota", func(t *testing.T) {
		k := e.keys["rate"]
		var last *httptest.ResponseRecorder
		for range 3 {
			last = e.get(t, "/v1/tickers/GOOG", vals("access_key", k))
		}
		if last.Code != 429 || decode[apiErr](t, last).Error.Code != "rate_limit_reached" || last.Header().Get("Retry-After") == "" ||
			last.Header().Get("X-RateLimit-Limit") != "2" || last.Header().Get("X-RateLimit-Remaining") != "0" || last.Header().Get("RateLimit-Policy") != `"second";q=2;w=1` {
			t.Errorf("rate: %d %v", last.Code, last.Header())
		}
		q := e.keys["quota"]
		for i := range 2 {
			if rec := e.get(t, "/v1/tickers/GOOG", vals("access_key", q)); rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("RateLimit"), fmt.Sprintf(`"month";r=%d;`, 1-i)) {
				t.Errorf("quota request %d: %d %v", i, rec.Code, rec.Header())
			}
		}
		rec := e.get(t, "/v1/tickers/GOOG", vals("access_key", q))
		if rec.Code != 429 || decode[apiErr](t, rec).Error.Code != "usage_limit_reached" {
			t.Errorf("quota: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("etag and 304", func(t *testing.T) {
		rec := e.get(t, "/v1/eod", vals("symbols", "GOOG"))
		etag := rec.Header().Get("ETag")
		rec2 := e.get(t, "/v1/eod", vals("symbols", "goog", "limit", "100"), "If-None-Match", etag)
		if rec2.Code != 304 || rec2.Body.Len() != 0 {
			t.Errorf("revalidation %d", rec2.Code)
		}
	})

	t.Run("an import is visible within the data version's bound", func(t *testing.T) {
		before := decode[eodRec](t, e.get(t, "/v1/tickers/MSFT/eod/latest", nil))
		load := ingest.Load{Bars: ingest.Bars([]ingest.BarRow{{Symbol: "MSFT", Date: day("2003-06-23"), Open: 26.14, High: 26.24, Low: 25.49, Close: 25.78, Volume: 52584500}})}
		res, err := e.store.Ingest.Apply(context.Background(), load)
		if err != nil {
			t.Fatal(err)
		}
		// The import command publishes the version to Redis after commit.
		published := time.Now()
		if _, err := dataversion.Publish(context.Background(), e.rdb, res.Version); err != nil {
			t.Fatal(err)
		}
		// The announcement reaches the server within a network delay; the
		// poll bounds it at dataversion.DefaultPollInterval when lost.
		var after eodRec
		for {
			after = decode[eodRec](t, e.get(t, "/v1/tickers/MSFT/eod/latest", nil))
			if after.Date[:10] != before.Date[:10] || time.Since(published) > dataversion.DefaultPollInterval+time.Second {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if before.Date[:10] != "2003-06-20" || after.Date[:10] != "2003-06-23" || after.Close != 25.78 {
			t.Errorf("stale after import: before %s, after %s", before.Date, after.Date)
		}
	})

	t.Run("operations and logs", func(t *testing.T) {
		rec := e.doc.do(t, e.srv, "/readyz")
		r := decode[map[string]string](t, rec)
		if rec.Code != 200 || r["database"] != "ok" || r["cache"] != "ok" {
			t.Errorf("readyz %d %v", rec.Code, r)
		}
		m := e.doc.do(t, e.srv, "/metrics").Body.String()
		for _, want := range []string{"marketdata_cache_hits_total", "marketdata_cache_misses_total", "marketdata_cache_errors_total", `route="/v1/eod"`} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		out := e.logs.String()
		for name, k := range e.keys {
			if strings.Contains(out, k) || strings.Contains(out, k[4:24]) {
				t.Errorf("logs contain the %s key", name)
			}
		}
		if !strings.Contains(out, "access_key=REDACTED") {
			t.Error("no redacted access log line")
		}
	})
}

// TestIndicesEndToEnd holds /v2/indexlist and /v2/indexinfo to the
// seeded index's bars: its latest close, the change from the close
// before, and null for the changes whose earlier close the seed lacks.
func TestIndicesEndToEnd(t *testing.T) {
	e := newE2E(t)
	list := decode[page[[]struct{ Benchmark string }]](t, e.get(t, "/v2/indexlist", nil))
	if list.Pagination.Total != 1 || len(list.Data) != 1 || list.Data[0].Benchmark != "GSPC.INDX" {
		t.Fatalf("indexlist: %+v, want GSPC.INDX alone", list)
	}
	rec := e.get(t, "/v2/indexinfo", vals("index", "gspc.indx"))
	if rec.Code != 200 {
		t.Fatalf("indexinfo: %d %s", rec.Code, rec.Body)
	}
	info := decode[[]map[string]any](t, rec)
	want := map[string]any{"benchmark": "GSPC.INDX", "region": nil, "country": "USA", "price": "998.01001", "price_change_day": "-5.34",
		"percentage_day": "-0.53%", "percentage_week": nil, "percentage_month": nil, "percentage_year": nil, "date": "2008-10-14"}
	if len(info) != 1 || fmt.Sprint(info[0]) != fmt.Sprint(want) {
		t.Errorf("indexinfo: %v\nwant %v", info, want)
	}
	for _, q := range []url.Values{vals("index", "GOOG"), vals("index", "NOPE")} {
		if rec := e.get(t, "/v2/indexinfo", q); rec.Code != 404 {
			t.Errorf("indexinfo %v: %d, want 404 (not an index)", q, rec.Code)
		}
	}
	if rec := e.get(t, "/v2/indexinfo", nil); rec.Code != 422 {
		t.Errorf("indexinfo without index: %d, want 422", rec.Code)
	}
	if rec := e.get(t, "/v1/indexlist", nil); rec.Code != 404 {
		t.Errorf("/v1/indexlist: %d, want 404 (a v2 function)", rec.Code)
	}
}
