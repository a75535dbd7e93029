package eodjson

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

func TestEncode(t *testing.T) {
	bar := marketdata.Bar{Symbol: "GOOG", Date: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC), Open: 393.53, High: 394.5, Low: 357, Close: 362.71, Volume: 7784800,
		AdjOpen: 196.765, AdjHigh: 197.25, AdjLow: 178.5, AdjClose: 181.355, AdjVolume: 15569600, SplitFactor: 1,
		Name: `Alphabet "C" <&>` + "\u2028\x01\xff", ExchangeCode: "NASDAQ", Exchange: "XNAS", AssetType: "Stock", PriceCurrency: "USD"}
	enc := Encode(marketdata.EODPage{Bars: []marketdata.Bar{bar, bar}, Total: 7})
	if enc.Count != 2 || enc.Total != 7 {
		t.Errorf("count/total %d/%d", enc.Count, enc.Total)
	}
	var recs []map[string]any
	if err := json.Unmarshal(enc.Data, &recs); err != nil {
		t.Fatalf("invalid JSON %s: %v", enc.Data, err)
	}
	r := recs[0]
	if r["date"] != "2008-10-14T00:00:00+0000" || r["close"] != 362.71 || r["volume"] != 7784800.0 || r["name"] != `Alphabet "C" <&>`+"\u2028\x01\ufffd" || r["adj_open"] != 196.765 {
		t.Errorf("record %v", r)
	}
	want := []string{"open", "high", "low", "close", "volume", "adj_high", "adj_low", "adj_close", "adj_open", "adj_volume", "split_factor", "dividend", "name", "symbol", "exchange_code", "exchange", "asset_type", "price_currency", "date"}
	if len(r) != len(want) {
		t.Errorf("fields %v", r)
	}
	for _, k := range want {
		if _, ok := r[k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
}

// Closed is the page and the envelope's closing brace whatever made the
// page, and what a caller appends to Data never reaches it: Data's
// capacity ends at its length.
func TestClosedIsDataAndBrace(t *testing.T) {
	bar := marketdata.Bar{Symbol: "AAPL", Date: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), Close: 185.64}
	encoded := Encode(marketdata.EODPage{Bars: []marketdata.Bar{bar}, Total: 1})
	for _, c := range []struct {
		name string
		page Page
	}{
		{"encoded", encoded},
		{"decoded", Decoded(append([]byte(nil), encoded.Data...), 1, 1)},
		{"built", Page{Data: []byte("[]")}},
	} {
		data := string(c.page.Data)
		if got := string(c.page.Closed()); got != data+"}" {
			t.Errorf("%s: Closed() = %q, want %q", c.name, got, data+"}")
		}
		if cap(c.page.Data) != len(c.page.Data) && c.name != "built" {
			t.Errorf("%s: Data has room (cap %d, len %d): an append would write over the brace", c.name, cap(c.page.Data), len(c.page.Data))
		}
		_ = append(c.page.Data, 'x')
		if got := string(c.page.Closed()); got != data+"}" {
			t.Errorf("%s: after an append to Data, Closed() = %q", c.name, got)
		}
		if string(c.page.Data) != data {
			t.Errorf("%s: Data changed to %q", c.name, c.page.Data)
		}
	}
}
