package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/demo"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// This file plays the part of a marketstack client. Its shapes are written
// from marketstack's published v1 documentation and v2 OpenAPI
// description, not from this service's code: every object must have
// exactly these keys (nulls included) with these JSON types.

// Shape tokens.
const (
	str     = "string"
	num     = "number"
	integer = "integer"
	boolean = "boolean"
)

// obj is an object with exactly these keys; arr an array of one shape;
// orNull a value that may be null; anyObj any object.
type (
	obj    map[string]any
	arr    struct{ of any }
	orNull struct{ of any }
)

const anyObj = "object"

func checkShape(path string, v any, want any) []string {
	switch w := want.(type) {
	case orNull:
		if v == nil {
			return nil
		}
		return checkShape(path, v, w.of)
	case string:
		ok := false
		switch w {
		case str:
			_, ok = v.(string)
		case num:
			_, ok = v.(float64)
		case integer:
			f, isNum := v.(float64)
			ok = isNum && f == math.Trunc(f)
		case boolean:
			_, ok = v.(bool)
		case anyObj:
			_, ok = v.(map[string]any)
		}
		if !ok {
			return []string{fmt.Sprintf("%s: want %s, got %#v", path, w, v)}
		}
		return nil
	case arr:
		items, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an array, got %#v", path, v)}
		}
		var errs []string
		for i, it := range items {
			errs = append(errs, checkShape(fmt.Sprintf("%s[%d]", path, i), it, w.of)...)
		}
		return errs
	case obj:
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %#v", path, v)}
		}
		var errs []string
		for k, kw := range w {
			kv, present := m[k]
			if !present {
				errs = append(errs, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			errs = append(errs, checkShape(path+"."+k, kv, kw)...)
		}
		for k := range m {
			if _, known := w[k]; !known {
				errs = append(errs, fmt.Sprintf("%s.%s: not in marketstack's shape", path, k))
			}
		}
		sort.Strings(errs)
		return errs
	}
	return []string{fmt.Sprintf("%s: bad shape %T", path, want)}
}

// with returns o plus the keys of more.
func (o obj) with(more obj) obj {
	out := obj{}
	for k, v := range o {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func envelopeOf(data any) obj {
	return obj{"pagination": obj{"limit": integer, "offset": integer, "count": integer, "total": integer}, "data": data}
}

var (
	eodShape = obj{"open": num, "high": num, "low": num, "close": num, "volume": num,
		"adj_high": orNull{num}, "adj_low": orNull{num}, "adj_close": num, "adj_open": orNull{num}, "adj_volume": orNull{num},
		"split_factor": num, "dividend": num, "name": str, "symbol": str, "exchange_code": str, "exchange": str,
		"asset_type": str, "price_currency": str, "date": str}
	stockExchangeV1 = obj{"name": str, "acronym": str, "mic": str, "country": str, "country_code": str, "city": str, "website": str}
	tickerV1        = obj{"name": str, "symbol": str, "has_intraday": boolean, "has_eod": boolean, "country": orNull{str}, "stock_exchange": orNull{stockExchangeV1}}
	timezoneShape   = obj{"timezone": str, "abbr": str, "abbr_dst": str}
	currencyV1      = obj{"code": str, "symbol": str, "name": str}
	exchangeV1      = stockExchangeV1.with(obj{"timezone": orNull{timezoneShape}, "currency": orNull{currencyV1}})
	tickerBrief     = obj{"name": str, "symbol": str, "has_intraday": boolean, "has_eod": boolean}
	splitShape      = obj{"date": str, "split_factor": num, "symbol": str}
	dividendShape   = obj{"date": str, "dividend": num, "symbol": str}

	exchangeV2 = obj{"name": str, "acronym": str, "mic": str, "country": orNull{str}, "country_code": str, "city": str,
		"website": str, "operating_mic": str, "oprt_sgmt": str, "legal_entity_name": orNull{str}, "exchange_lei": orNull{str},
		"market_category_code": orNull{str}, "exchange_status": str, "date_creation": orNull{str}, "date_last_update": orNull{str},
		"date_last_validation": orNull{str}, "date_expiry": orNull{str}, "comments": orNull{str}}
	tickerInfoV2 = obj{"name": str, "symbol": str, "cik": orNull{str}, "isin": orNull{str}, "cusip": orNull{str},
		"ein_employer_id": orNull{str}, "lei": orNull{str}, "series_id": orNull{str}, "item_type": str, "sector": orNull{str},
		"industry": orNull{str}, "sic_code": orNull{str}, "sic_name": orNull{str}, "stock_exchange": orNull{exchangeV2}}
	tickersListV2 = obj{"name": str, "ticker": str, "has_intraday": boolean, "has_eod": boolean,
		"stock_exchange": orNull{obj{"name": str, "acronym": str, "mic": str}}}
	tickerEODHeadV2 = obj{"name": str, "symbol": str, "has_intraday": boolean, "has_eod": boolean, "country": orNull{str}}
	splitV2         = splitShape.with(obj{"stock_split": str})
	dividendV2      = dividendShape.with(obj{"payment_date": orNull{str}, "record_date": orNull{str}, "declaration_date": orNull{str}, "distr_freq": orNull{str}})
	currencyV2      = currencyV1.with(obj{"symbol_native": str})
	indexInfoV2     = obj{"benchmark": str, "region": orNull{str}, "country": orNull{str}, "price": str, "price_change_day": orNull{str},
		"percentage_day": orNull{str}, "percentage_week": orNull{str}, "percentage_month": orNull{str}, "percentage_year": orNull{str}, "date": str}
	stockPriceV2 = obj{"exchange_code": orNull{str}, "exchange_name": orNull{str}, "country": orNull{str}, "ticker": str, "price": str,
		"currency": str, "trade_last": str, "source": str}
	tickerInfoFull = obj{"name": str, "ticker": str, "item_type": str, "sector": orNull{str}, "industry": orNull{str},
		"exchange_code": orNull{str}, "full_time_employees": orNull{str}, "ipo_date": orNull{str}, "date_founded": orNull{str},
		"key_executives": orNull{arr{anyObj}}, "incorporation": orNull{str}, "incorporation_description": orNull{str},
		"start_fiscal": orNull{str}, "end_fiscal": orNull{str}, "reporting_currency": orNull{str}, "address": orNull{anyObj},
		"post_address": orNull{anyObj}, "phone": orNull{str}, "website": orNull{str}, "previous_names": orNull{arr{str}},
		"about": orNull{str}, "mission": orNull{str}, "vision": orNull{str},
		"stock_exchanges": arr{obj{"city": str, "country": str, "website": str, "acronym1": str, "alpha2_code": str, "exchange_mic": str, "exchange_name": str}}}
	errorShape = obj{"error": obj{"code": str, "message": str, "context": anyObj}}
)

// demoE2E is the end-to-end server over the demo dataset, the data a team
// trying the service first sees.
func demoE2E(t *testing.T, cors ...string) *e2e {
	t.Helper()
	return newE2EWith(t, e2eOptions{cors: cors, seed: func(t *testing.T, store *testenv.Stores) {
		if _, err := demo.Load(context.Background(), store.Ingest); err != nil {
			t.Fatalf("load demo: %v", err)
		}
	}})
}

func getJSON(t *testing.T, e *e2e, target string) (int, any) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := e.get(t, u.Path, u.Query())
	var body any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %s", target, rec.Code, rec.Body)
	}
	return rec.Code, body
}

// TestMarketstackClientShapes requests every served v1 and v2 function as
// a marketstack client would and holds each answer to marketstack's shape.
func TestMarketstackClientShapes(t *testing.T) {
	e := demoE2E(t)
	cases := []struct {
		target string
		want   any
	}{
		// v1
		{"/v1/eod?symbols=GOOG,GSPC.INDX&limit=4", envelopeOf(arr{eodShape})},
		{"/v1/eod/latest?symbols=GOOG,MSFT", envelopeOf(arr{eodShape})},
		{"/v1/eod/2008-10-14?symbols=GOOG", envelopeOf(arr{eodShape})},
		{"/v1/tickers", envelopeOf(arr{tickerV1})},
		{"/v1/tickers?search=alpha&exchange=XNAS", envelopeOf(arr{tickerV1})},
		{"/v1/tickers/GOOG", tickerV1},
		{"/v1/tickers/GOOG/eod?limit=2", envelopeOf(tickerV1.with(obj{"eod": arr{eodShape}}))},
		{"/v1/tickers/GOOG/eod/latest", eodShape},
		{"/v1/tickers/GOOG/eod/2008-10-14", eodShape},
		{"/v1/tickers/GOOG/splits", envelopeOf(arr{splitShape})},
		{"/v1/tickers/MSFT/dividends", envelopeOf(arr{dividendShape})},
		{"/v1/exchanges", envelopeOf(arr{exchangeV1})},
		{"/v1/exchanges/XNAS", exchangeV1},
		{"/v1/exchanges/XNAS/tickers", envelopeOf(exchangeV1.with(obj{"tickers": arr{tickerBrief}}))},
		{"/v1/exchanges/XNAS/eod?symbols=GOOG&limit=2", envelopeOf(exchangeV1.with(obj{"eod": arr{eodShape}}))},
		{"/v1/exchanges/XNAS/eod/latest?symbols=GOOG", envelopeOf(exchangeV1.with(obj{"eod": arr{eodShape}}))},
		{"/v1/exchanges/XNAS/eod/2008-10-14?symbols=GOOG", envelopeOf(exchangeV1.with(obj{"eod": arr{eodShape}}))},
		{"/v1/splits?symbols=GOOG", envelopeOf(arr{splitShape})},
		{"/v1/dividends?symbols=MSFT", envelopeOf(arr{dividendShape})},
		{"/v1/currencies", envelopeOf(arr{currencyV1})},
		{"/v1/timezones", envelopeOf(arr{timezoneShape})},
		// v2
		{"/v2/eod?symbols=GOOG,GSPC.INDX&limit=4", envelopeOf(arr{eodShape})},
		{"/v2/eod/latest?symbols=GOOG", envelopeOf(arr{eodShape})},
		{"/v2/eod/2008-10-14?symbols=GOOG", envelopeOf(arr{eodShape})},
		{"/v2/tickerslist", envelopeOf(arr{tickersListV2})},
		{"/v2/tickerslist?search=micro", envelopeOf(arr{tickersListV2})},
		{"/v2/tickers/GOOG", tickerInfoV2},
		{"/v2/tickers/GOOG/eod?limit=2", envelopeOf(tickerEODHeadV2.with(obj{"eod": arr{eodShape}}))},
		{"/v2/tickers/GOOG/eod/latest", eodShape},
		{"/v2/tickers/GOOG/eod/2008-10-14", eodShape},
		{"/v2/tickers/GOOG/splits", envelopeOf(arr{splitV2})},
		{"/v2/tickers/MSFT/dividends", envelopeOf(arr{dividendV2})},
		{"/v2/splits?symbols=GOOG", envelopeOf(arr{splitV2})},
		{"/v2/dividends?symbols=MSFT", envelopeOf(arr{dividendV2})},
		{"/v2/exchanges", envelopeOf(arr{exchangeV2})},
		{"/v2/exchanges/XNAS", envelopeOf(arr{exchangeV2})},
		{"/v2/exchanges/XNAS/tickers", envelopeOf(exchangeV2.with(obj{"tickers": arr{tickerBrief}}))},
		{"/v2/exchanges/XNAS/eod?symbols=GOOG&limit=2", envelopeOf(exchangeV2.with(obj{"eod": arr{eodShape}}))},
		{"/v2/exchanges/XNAS/eod/latest?symbols=GOOG", envelopeOf(exchangeV2.with(obj{"eod": arr{eodShape}}))},
		{"/v2/exchanges/XNAS/eod/2008-10-14?symbols=GOOG", envelopeOf(exchangeV2.with(obj{"eod": arr{eodShape}}))},
		{"/v2/currencies", envelopeOf(arr{currencyV2})},
		{"/v2/timezones", envelopeOf(arr{timezoneShape})},
		{"/v2/tickerinfo?ticker=GOOG", obj{"data": tickerInfoFull}},
		{"/v2/stockprice?ticker=GOOG", obj{"data": arr{stockPriceV2}}},
		{"/v2/stockprice?ticker=GOOG&exchange=NASDAQ", obj{"data": arr{stockPriceV2}}},
		{"/v2/indexlist", envelopeOf(arr{obj{"benchmark": str}})},
		{"/v2/indexinfo?index=GSPC.INDX", arr{indexInfoV2}},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			code, body := getJSON(t, e, tc.target)
			if code != http.StatusOK {
				t.Fatalf("status %d: %v", code, body)
			}
			for _, msg := range checkShape("$", body, tc.want) {
				t.Error(msg)
			}
			// An empty list proves nothing about its items.
			if m, ok := body.(map[string]any); ok {
				if items, ok := m["data"].([]any); ok && len(items) == 0 {
					t.Errorf("empty data: the case checks no item")
				}
			}
		})
	}
}

// TestMarketstackClientErrors holds every error a client branches on to
// marketstack's code, status and shape, on both versions.
func TestMarketstackClientErrors(t *testing.T) {
	e := demoE2E(t)
	tickersOnly := e.keys["tickers"]
	cases := []struct {
		target, key string
		status      int
		code        string
	}{
		{"/v1/eod?symbols=GOOG", "-", 401, "missing_access_key"},
		{"/v1/eod?symbols=GOOG", "tdm_nonsense", 401, "invalid_access_key"},
		{"/v1/eod?symbols=GOOG", tickersOnly, 403, "function_access_restricted"},
		{"/v1/no_such_function", "", 404, "invalid_api_function"},
		{"/v1/tickerslist", "", 404, "invalid_api_function"},
		{"/v1/tickers/NOPE", "", 404, "404_not_found"},
		{"/v1/tickers/NOPE/splits", "", 404, "404_not_found"},
		{"/v1/exchanges/XXXX/eod?symbols=GOOG", "", 404, "404_not_found"},
		{"/v1/eod?symbols=GOOG&limit=0", "", 422, "validation_error"},
		{"/v1/exchanges/XNAS/eod", "", 422, "validation_error"},
		{"/v1/currencies?limit=5000", "", 422, "validation_error"},
		{"/v1/eod?symbols=NOPE", "", 422, "no_valid_symbols_provided"},
		{"/v2/eod?symbols=GOOG", "-", 401, "missing_access_key"},
		{"/v2/tickers", "", 404, "invalid_api_function"},
		{"/v2/tickers/NOPE", "", 404, "404_not_found"},
		{"/v2/tickerslist", tickersOnly, 200, ""},
		{"/v2/exchanges", tickersOnly, 403, "function_access_restricted"},
		{"/v2/timezones?offset=-1", "", 422, "validation_error"},
		{"/v2/no_such_function", "", 404, "invalid_api_function"},
		{"/v2/tickers/NOPE/splits", "", 404, "404_not_found"},
	}
	// v1 never had the v2 dataset functions (their 403 without data:
	// TestDatasetFunctionsRestrictedWithoutData).
	for _, f := range []string{"/commodities", "/commoditieshistory", "/companyratings", "/bondlist", "/bond", "/etflist", "/etfholdings",
		"/cik_code", "/company_name", "/submissions", "/company_facts", "/concept/accounts_payable", "/frames/accounts_payable/USD"} {
		cases = append(cases, struct {
			target, key string
			status      int
			code        string
		}{"/v1" + f, "", 404, "invalid_api_function"})
	}
	for _, version := range []string{"v1", "v2"} {
		for _, p := range []string{"/intraday", "/intraday/latest", "/intraday/2024-01-02",
			"/tickers/GOOG/intraday", "/tickers/GOOG/intraday/latest", "/tickers/GOOG/intraday/2024-01-02",
			"/exchanges/XNAS/intraday", "/exchanges/XNAS/intraday/latest", "/exchanges/XNAS/intraday/2024-01-02"} {
			cases = append(cases, struct {
				target, key string
				status      int
				code        string
			}{"/" + version + p + "?symbols=GOOG", tickersOnly, 403, "function_access_restricted"})
		}
		// A key without the intraday scope gets the plan's 403 above; a key
		// is still asked for first: 401 before the plan's 403.
		cases = append(cases, struct {
			target, key string
			status      int
			code        string
		}{"/" + version + "/intraday?symbols=GOOG", "-", 401, "missing_access_key"})
	}
	for _, tc := range cases {
		t.Run(tc.target+" "+tc.code, func(t *testing.T) {
			u, _ := url.Parse(tc.target)
			q := u.Query()
			switch tc.key {
			case "": // the main key
				q.Set("access_key", e.key)
			case "-": // no key
			default:
				q.Set("access_key", tc.key)
			}
			target := u.Path + "?" + q.Encode()
			rec := e.doc.do(t, e.srv, target)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code == "" {
				return
			}
			var body any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			for _, msg := range checkShape("$", body, errorShape) {
				t.Error(msg)
			}
			if got := body.(map[string]any)["error"].(map[string]any)["code"]; got != tc.code {
				t.Errorf("code %v, want %s", got, tc.code)
			}
		})
	}
}

func field(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(x) {
				t.Fatalf("no element %s in %v", p, x)
			}
			v = x[i]
		default:
			t.Fatalf("no %s in %#v", p, v)
		}
	}
	return v
}

// TestMarketstackDropIn checks the values behind the issues real clients
// met: metadata, exchange codes, index rows and adjusted demo prices.
func TestMarketstackDropIn(t *testing.T) {
	e := demoE2E(t)

	t.Run("exchange objects carry marketstack's timezone and currency", func(t *testing.T) {
		_, x := getJSON(t, e, "/v1/exchanges/XNAS")
		tz, cur := field(t, x, "timezone"), field(t, x, "currency")
		if want := (map[string]any{"timezone": "America/New_York", "abbr": "EST", "abbr_dst": "EDT"}); fmt.Sprint(tz) != fmt.Sprint(want) {
			t.Errorf("timezone %v, want %v", tz, want)
		}
		if want := (map[string]any{"code": "USD", "symbol": "$", "name": "US Dollar"}); fmt.Sprint(cur) != fmt.Sprint(want) {
			t.Errorf("currency %v, want %v", cur, want)
		}
		_, tokyo := getJSON(t, e, "/v1/exchanges/XTKS")
		if a, d := field(t, tokyo, "timezone", "abbr"), field(t, tokyo, "timezone", "abbr_dst"); a != "JST" || d != "JST" {
			t.Errorf("Tokyo abbreviations %v/%v, want JST/JST", a, d)
		}
	})

	t.Run("tickers carry country, null when unknown", func(t *testing.T) {
		for _, target := range []string{"/v1/tickers/GOOG", "/v1/tickers/GOOG/eod?limit=1"} {
			_, body := getJSON(t, e, target)
			m := body.(map[string]any)
			if d, ok := m["data"].(map[string]any); ok {
				m = d
			}
			if v, ok := m["country"]; !ok || v != nil {
				t.Errorf("%s: country %v (present %v), want null", target, v, ok)
			}
		}
	})

	t.Run("Xetra is XETRA, and the ISO MIC XETR is an alias", func(t *testing.T) {
		for _, target := range []string{"/v1/exchanges/XETRA", "/v1/exchanges/XETR", "/v1/exchanges/xetr"} {
			code, body := getJSON(t, e, target)
			if code != 200 || field(t, body, "mic") != "XETRA" {
				t.Errorf("%s: %d %v, want XETRA", target, code, body)
			}
		}
		// v2 answers the exchange as a list of one.
		if code, body := getJSON(t, e, "/v2/exchanges/XETR"); code != 200 || field(t, body, "data", "0", "mic") != "XETRA" {
			t.Errorf("/v2/exchanges/XETR: %d %v, want XETRA", code, body)
		}
		code, body := getJSON(t, e, "/v1/tickers?exchange=XETR")
		if code != 200 {
			t.Errorf("exchange=XETR: %d %v", code, body)
		}
		_, list := getJSON(t, e, "/v1/exchanges?limit=1000")
		for _, x := range field(t, list, "data").([]any) {
			if field(t, x, "mic") == "XETR" {
				t.Errorf("exchanges still list XETR")
			}
		}
	})

	t.Run("index rows have null adjusted fields and adj_close = close", func(t *testing.T) {
		for _, version := range []string{"v1", "v2"} {
			_, body := getJSON(t, e, "/"+version+"/eod/2008-10-14?symbols=GSPC.INDX")
			rec := field(t, body, "data", "0")
			for _, k := range []string{"adj_open", "adj_high", "adj_low", "adj_volume"} {
				if v, ok := rec.(map[string]any)[k]; !ok || v != nil {
					t.Errorf("%s %s = %v (present %v), want null", version, k, v, ok)
				}
			}
			if field(t, rec, "adj_close") != field(t, rec, "close") || field(t, rec, "close") != 998.01001 {
				t.Errorf("%s adj_close %v, close %v; want both 998.01001", version, field(t, rec, "adj_close"), field(t, rec, "close"))
			}
		}
		// A stock's row keeps its numbers.
		_, body := getJSON(t, e, "/v1/eod/2008-10-14?symbols=GOOG")
		if v := field(t, body, "data", "0", "adj_open"); v == nil {
			t.Errorf("GOOG adj_open is null")
		}
	})

	t.Run("demo prices are adjusted for the shipped actions", func(t *testing.T) {
		_, goog := getJSON(t, e, "/v1/tickers/GOOG/eod/2008-10-14")
		if field(t, goog, "close") != 362.71 || field(t, goog, "volume") != 7784800.0 {
			t.Errorf("GOOG raw values changed: %v", goog)
		}
		// Two later splits, 2.002:1 and 20:1.
		wantAdj := math.Round(362.71/2.002/20*1e6) / 1e6
		if got := field(t, goog, "adj_close").(float64); math.Abs(got-wantAdj) > 1e-6 {
			t.Errorf("GOOG adj_close %v, want %v", got, wantAdj)
		}
		if got := field(t, goog, "adj_volume").(float64); math.Abs(got-7784800*40.04) > 1e-3 {
			t.Errorf("GOOG adj_volume %v, want %v", got, 7784800*40.04)
		}
		_, msft := getJSON(t, e, "/v1/tickers/MSFT/eod/2003-09-19")
		if got := field(t, msft, "adj_close").(float64); math.Round(got*100)/100 != 29.79 || field(t, msft, "close") != 29.96 {
			t.Errorf("MSFT 2003-09-19 close %v adj_close %v, want 29.96 and 29.79 as its source file says", field(t, msft, "close"), got)
		}
		_, splits := getJSON(t, e, "/v2/tickers/GOOG/splits?sort=ASC")
		got := []string{}
		for _, sp := range field(t, splits, "data").([]any) {
			got = append(got, fmt.Sprint(field(t, sp, "date"), " ", field(t, sp, "stock_split")))
		}
		if want := "[2014-03-27 2.002:1 2022-07-18 20:1]"; fmt.Sprint(got) != want {
			t.Errorf("GOOG splits %v, want %s", got, want)
		}
	})

	t.Run("currencies and timezones page like every list", func(t *testing.T) {
		_, all := getJSON(t, e, "/v1/currencies?limit=1000")
		total := field(t, all, "pagination", "total").(float64)
		_, page := getJSON(t, e, "/v1/currencies?limit=2&offset=1")
		if field(t, page, "pagination", "count") != 2.0 || field(t, page, "pagination", "total") != total ||
			field(t, page, "data", "0", "code") != field(t, all, "data", "1", "code") {
			t.Errorf("page 2 of currencies %v does not follow the full list", page)
		}
		_, tz := getJSON(t, e, "/v1/timezones?limit=1000")
		found := false
		for _, z := range field(t, tz, "data").([]any) {
			if field(t, z, "timezone") == "Europe/Berlin" {
				found = field(t, z, "abbr") == "CET" && field(t, z, "abbr_dst") == "CEST"
			}
		}
		if !found {
			t.Errorf("timezones lack Europe/Berlin CET/CEST: %v", tz)
		}
	})

	t.Run("each version serves its OpenAPI document without a key", func(t *testing.T) {
		for version, want := range map[string]string{"v1": "1.0.0", "v2": "2.0.0"} {
			rec := e.doc.do(t, e.srv, "/"+version+"/openapi.json")
			var doc struct{ Info struct{ Version string } }
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); rec.Code != 200 || err != nil || doc.Info.Version != want {
				t.Errorf("%s: %d %v version %q, want %s", version, rec.Code, err, doc.Info.Version, want)
			}
		}
	})

	t.Run("exchange EOD keeps the exchange's records only", func(t *testing.T) {
		_, body := getJSON(t, e, "/v1/exchanges/XNAS/eod?symbols=GOOG,GSPC.INDX&date_from=2008-10-14&date_to=2008-10-14")
		if field(t, body, "data", "mic") != "XNAS" {
			t.Errorf("head %v", body)
		}
		recs := field(t, body, "data", "eod").([]any)
		if len(recs) != 1 || field(t, recs[0], "symbol") != "GOOG" || field(t, recs[0], "close") != 362.71 {
			t.Errorf("XNAS records %v, want GOOG's only", recs)
		}
	})
}

// TestCORS checks the browser policy: answers and preflights for listed
// origins, nothing for others, and nothing at all without a list.
func TestCORS(t *testing.T) {
	const app = "https://app.example.com"
	e := demoE2E(t, app)
	send := func(srv http.Handler, method, origin string, header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://localhost:8081/v1/eod?symbols=GOOG&access_key="+url.QueryEscape(e.key), nil)
		req.Header.Set("Origin", origin)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := send(e.srv, http.MethodGet, app)
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "Retry-After") || rec.Header().Get("Vary") != "Origin" {
		t.Errorf("allowed origin: %d %v", rec.Code, rec.Header())
	}
	rec = send(e.srv, http.MethodGet, "https://evil.example.com")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin got %q", rec.Header().Get("Access-Control-Allow-Origin"))
	}
	rec = send(e.srv, http.MethodOptions, app, "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != app ||
		rec.Header().Get("Access-Control-Allow-Methods") != "GET" || !strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	// An error answer is readable by the app too.
	req := httptest.NewRequest(http.MethodGet, "http://localhost:8081/v1/eod?symbols=GOOG", nil)
	req.Header.Set("Origin", app)
	erec := httptest.NewRecorder()
	e.srv.ServeHTTP(erec, req)
	if erec.Code != 401 || erec.Header().Get("Access-Control-Allow-Origin") != app {
		t.Errorf("401 without CORS headers: %d %v", erec.Code, erec.Header())
	}

	off := newE2E(t)
	rec = send(off.srv, http.MethodGet, app)
	if len(rec.Header().Values("Access-Control-Allow-Origin")) != 0 || rec.Header().Get("Vary") == "Origin" {
		t.Errorf("no origins configured, yet CORS headers: %v", rec.Header())
	}
	rec = send(off.srv, http.MethodOptions, app, "Access-Control-Request-Method", "GET")
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight without a policy: %d %v", rec.Code, rec.Header())
	}
}
