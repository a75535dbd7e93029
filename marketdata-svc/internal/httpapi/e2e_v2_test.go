package httpapi_test

import (
	"testing"
)

// TestStockPriceAndTickerInfoEndToEnd holds /v2/stockprice to the bar it
// names as its source (the seed has no intraday bars, so the latest EOD
// close) and /v2/tickerinfo to the ticker's stored fields.
func TestStockPriceAndTickerInfoEndToEnd(t *testing.T) {
	e := newE2E(t)
	type priceItem struct {
		Ticker, Price, Currency, Source string
		TradeLast                       string `json:"trade_last"`
		ExchangeCode                    string `json:"exchange_code"`
	}
	got := decode[struct{ Data []priceItem }](t, e.get(t, "/v2/stockprice", vals("ticker", "goog")))
	want := priceItem{Ticker: "GOOG", Price: "362.71", Currency: "USD", Source: "eod", TradeLast: "2008-10-14T00:00:00+0000", ExchangeCode: "NASDAQ"}
	if len(got.Data) != 1 || got.Data[0] != want {
		t.Errorf("stockprice: %+v, want %+v", got.Data, want)
	}
	for _, tc := range []struct {
		q    []string
		code int
	}{
		{[]string{"ticker", "GOOG", "exchange", "XNAS"}, 200},
		{[]string{"ticker", "GOOG", "exchange", "XLON"}, 404},
		{[]string{"ticker", "AAPL"}, 404}, // a ticker without bars has no price
		{[]string{"ticker", "NOPE"}, 404},
		{nil, 422},
	} {
		if rec := e.get(t, "/v2/stockprice", vals(tc.q...)); rec.Code != tc.code {
			t.Errorf("stockprice %v: %d, want %d: %s", tc.q, rec.Code, tc.code, rec.Body)
		}
	}
	info := decode[struct{ Data map[string]any }](t, e.get(t, "/v2/tickerinfo", vals("ticker", "GOOG")))
	if info.Data["name"] != "Alphabet Inc. Class C" || info.Data["item_type"] != "equity" || info.Data["exchange_code"] != "NASDAQ" || info.Data["sector"] != nil {
		t.Errorf("tickerinfo: %v", info.Data)
	}
	if rec := e.get(t, "/v2/tickerinfo", vals("ticker", "NOPE")); rec.Code != 404 {
		t.Errorf("tickerinfo NOPE: %d, want 404", rec.Code)
	}
}
