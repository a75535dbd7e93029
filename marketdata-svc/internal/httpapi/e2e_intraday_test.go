package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

type intradayRec struct {
	Open, High, Low, Last, Close, Volume float64
	Date, Symbol, Exchange               string
	MarketstackLast                      *float64 `json:"marketstack_last"`
}

// Every intraday route of both versions against real PostgreSQL and Redis
// with the demo's synthetic minutes (GOOG 2008-10-10..14, MSFT
// 2003-09-17..19), each answer validated against the OpenAPI document of
// its version by e.get.
func TestIntradayEndToEnd(t *testing.T) { testIntradayEndToEnd(t, demoE2E(t)) }

func testIntradayEndToEnd(t *testing.T, e *e2e) {
	for _, v := range []string{"v1", "v2"} {
		t.Run(v, func(t *testing.T) {
			p := decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday", vals("symbols", "GOOG,MSFT")))
			// 1hour buckets from 09:30 New York: 7 a day, 3 days each.
			if p.Pagination.Total != 42 || len(p.Data) != 42 || p.Data[0].Symbol != "GOOG" || p.Data[0].Date != "2008-10-14T19:30:00+0000" || p.Data[0].Exchange != "XNAS" {
				t.Errorf("intraday: %+v first %+v", p.Pagination, p.Data[0])
			}
			if (v == "v2") != (p.Data[0].MarketstackLast != nil) || p.Data[0].Last != p.Data[0].Close {
				t.Errorf("%s fields: %+v", v, p.Data[0])
			}
			p = decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday/latest", vals("symbols", "MSFT,GOOG")))
			if len(p.Data) != 2 || p.Data[0].Symbol != "GOOG" || p.Data[1].Date != "2003-09-19T19:30:00+0000" {
				t.Errorf("latest: %+v", p.Data)
			}
			p = decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday/2008-10-14", vals("symbols", "GOOG", "interval", "24hour")))
			if len(p.Data) != 1 || p.Data[0].Open != 393.53 || p.Data[0].High != 394.5 || p.Data[0].Low != 357 || p.Data[0].Close != 362.71 || p.Data[0].Volume != 7784800 {
				t.Errorf("24hour bar is not the EOD bar: %+v", p.Data)
			}
			tp := decode[page[struct {
				Symbol   string
				Intraday []intradayRec
			}]](t, e.get(t, "/"+v+"/tickers/goog/intraday", vals("interval", "30min", "limit", "5")))
			if tp.Data.Symbol != "GOOG" || len(tp.Data.Intraday) != 5 || tp.Pagination.Total != 39 {
				t.Errorf("ticker intraday: %+v", tp)
			}
			one := decode[intradayRec](t, e.get(t, "/"+v+"/tickers/GOOG/intraday/latest", vals("interval", "15min")))
			if one.Date != "2008-10-14T19:45:00+0000" || one.Close != 362.71 {
				t.Errorf("ticker latest: %+v", one)
			}
			tp = decode[page[struct {
				Symbol   string
				Intraday []intradayRec
			}]](t, e.get(t, "/"+v+"/tickers/GOOG/intraday/2008-10-13", nil))
			if tp.Pagination.Total != 7 || tp.Data.Intraday[0].Date != "2008-10-13T19:30:00+0000" {
				t.Errorf("ticker on date: %+v", tp)
			}
			// v1 wraps an exchange's bars in its object; v2 answers them flat,
			// as /v2/intraday does.
			exchangeBars := func(path string, q []string) (mic string, bars []intradayRec, total int) {
				t.Helper()
				if v == "v2" {
					p := decode[page[[]intradayRec]](t, e.get(t, path, vals(q...)))
					return "XNAS", p.Data, p.Pagination.Total
				}
				p := decode[page[struct {
					MIC      string
					Intraday []intradayRec
				}]](t, e.get(t, path, vals(q...)))
				return p.Data.MIC, p.Data.Intraday, p.Pagination.Total
			}
			// 3hour buckets 09:30, 12:30, 15:30; the index is listed elsewhere.
			if mic, bars, total := exchangeBars("/"+v+"/exchanges/xnas/intraday", []string{"symbols", "GOOG,GSPC.INDX", "interval", "3hour"}); mic != "XNAS" || total != 9 || len(bars) != 9 || bars[0].Exchange != "XNAS" {
				t.Errorf("exchange intraday: %s %d %+v", mic, total, bars)
			}
			if _, bars, _ := exchangeBars("/"+v+"/exchanges/XNAS/intraday/latest", []string{"symbols", "GOOG,MSFT"}); len(bars) != 2 {
				t.Errorf("exchange latest: %+v", bars)
			}
			if _, bars, total := exchangeBars("/"+v+"/exchanges/XNAS/intraday/2003-09-18", []string{"symbols", "MSFT", "interval", "1hour", "sort", "asc"}); total != 7 || bars[0].Date != "2003-09-18T13:30:00+0000" {
				t.Errorf("exchange on date: %d %+v", total, bars)
			}
			p = decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday", vals("symbols", "GOOG", "interval", "1min",
				"date_from", "2008-10-14T13:30:00+0000", "date_to", "2008-10-14T13:34:00Z")))
			if p.Pagination.Total != 5 {
				t.Errorf("timestamps bound minutes inclusively: %+v", p.Pagination)
			}
			// marketstack v2's documented form, "YYYY-MM-DD HH:MM" (":SS"),
			// reads the same minutes.
			p = decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday", vals("symbols", "GOOG", "interval", "1min",
				"date_from", "2008-10-14 13:30", "date_to", "2008-10-14 13:34:00")))
			if p.Pagination.Total != 5 {
				t.Errorf("space form bounds minutes inclusively: %+v", p.Pagination)
			}
			p = decode[page[[]intradayRec]](t, e.get(t, "/"+v+"/intraday/2008-10-14%2015:30", vals("symbols", "GOOG", "interval", "24hour")))
			if len(p.Data) != 1 || p.Data[0].Close != 362.71 {
				t.Errorf("{date} in the space form: %+v", p.Data)
			}
		})
	}

	t.Run("pages join without gaps or repeats", func(t *testing.T) {
		for _, sort := range []string{"DESC", "ASC"} {
			base := vals("symbols", "GOOG,MSFT", "interval", "5min", "sort", sort, "after_hours", "true")
			full := decode[page[[]intradayRec]](t, e.get(t, "/v1/intraday", withKV(base, "limit", "1000")))
			if full.Pagination.Total != 2*3*78 || len(full.Data) != 2*3*78 {
				t.Fatalf("full: %+v", full.Pagination)
			}
			var joined []intradayRec
			for off := 0; off < 2*3*78+10; off += 100 {
				p := decode[page[[]intradayRec]](t, e.get(t, "/v1/intraday", withKV(base, "limit", "100", "offset", fmt.Sprint(off))))
				if p.Pagination.Total != 2*3*78 || p.Pagination.Count != len(p.Data) {
					t.Errorf("page at %d: %+v", off, p.Pagination)
				}
				joined = append(joined, p.Data...)
			}
			if fmt.Sprint(joined) != fmt.Sprint(full.Data) {
				t.Errorf("%s: pages do not join up to the full list", sort)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			path   string
			params []string
			status int
			code   string
			param  string
		}{
			{"/v1/intraday", []string{"symbols", "GOOG", "interval", "2min"}, 422, "validation_error", "interval"},
			{"/v2/intraday", []string{"symbols", "GOOG", "after_hours", "maybe"}, 422, "validation_error", "after_hours"},
			{"/v1/intraday", []string{"symbols", "GOOG", "date_from", "2008-10-14T15:00:00Z", "date_to", "2008-10-14T14:00:00Z"}, 422, "validation_error", "date_from"},
			// A range longer than its interval's span is refused, on every
			// route that takes one; the longest allowed one is served.
			{"/v1/intraday", []string{"symbols", "GOOG", "interval", "1min", "date_from", "2008-10-01", "date_to", "2008-10-08"}, 422, "validation_error", "date_from"},
			{"/v1/intraday", []string{"symbols", "GOOG", "interval", "1min", "date_from", "2008-10-01T00:00:00Z", "date_to", "2008-10-08T00:00:00Z"}, 422, "validation_error", "date_from"},
			{"/v2/tickers/GOOG/intraday", []string{"date_from", "2000-01-01", "date_to", "2008-10-14"}, 422, "validation_error", "date_from"},
			{"/v1/exchanges/XNAS/intraday", []string{"symbols", "GOOG", "interval", "24hour", "date_from", "2008-01-01", "date_to", "2008-10-14"}, 422, "validation_error", "date_from"},
			{"/v1/intraday", []string{"symbols", "GOOG", "interval", "1min", "date_from", "2008-10-01", "date_to", "2008-10-07"}, 200, "", ""},
			{"/v1/intraday", []string{"symbols", "GOOG", "interval", "1min", "date_from", "2008-10-01T00:00:00Z", "date_to", "2008-10-07T23:59:59.999Z"}, 200, "", ""},
			{"/v1/intraday", nil, 422, "validation_error", "symbols"},
			{"/v1/intraday", []string{"symbols", "NOPE"}, 422, "no_valid_symbols_provided", ""},
			{"/v2/tickers/NOPE/intraday", nil, 404, "404_not_found", ""},
			{"/v1/tickers/AAPL/intraday/latest", nil, 404, "404_not_found", ""},
			{"/v1/exchanges/XXXX/intraday", []string{"symbols", "GOOG"}, 404, "404_not_found", ""},
			{"/v1/intraday/2008-02-30", []string{"symbols", "GOOG"}, 422, "validation_error", "date"},
		}
		for _, c := range cases {
			rec := e.get(t, c.path, vals(c.params...))
			body := decode[apiErr](t, rec)
			if rec.Code != c.status || body.Error.Code != c.code || (c.param != "" && body.Error.Context[c.param] == nil) {
				t.Errorf("%s %v: %d %s", c.path, c.params, rec.Code, rec.Body)
			}
		}
		for _, v := range []string{"v1", "v2"} {
			rec := e.get(t, "/"+v+"/tickers/GOOG/intraday", vals("access_key", e.keys["tickers"]))
			if rec.Code != 403 || !strings.Contains(rec.Body.String(), `"code":"function_access_restricted","message":"Your current subscription plan does not support access to this API function (intraday)."`) {
				t.Errorf("%s without the intraday scope: %d %s", v, rec.Code, rec.Body)
			}
		}
	})

	t.Run("has_intraday", func(t *testing.T) {
		p := decode[page[[]struct {
			Symbol      string
			HasIntraday bool `json:"has_intraday"`
		}]](t, e.get(t, "/v1/tickers", vals("symbols", "GOOG,GSPC.INDX")))
		if len(p.Data) != 2 || !p.Data[0].HasIntraday || p.Data[1].HasIntraday {
			t.Errorf("v1 tickers: %+v", p.Data)
		}
		p2 := decode[page[[]struct {
			Ticker      string
			HasIntraday bool `json:"has_intraday"`
		}]](t, e.get(t, "/v2/tickerslist", vals("search", "GOOG")))
		if len(p2.Data) == 0 || !p2.Data[0].HasIntraday {
			t.Errorf("v2 tickerslist: %+v", p2.Data)
		}
	})
}

func withKV(base map[string][]string, kv ...string) map[string][]string {
	out := map[string][]string{}
	for k, v := range base {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = []string{kv[i+1]}
	}
	return out
}
