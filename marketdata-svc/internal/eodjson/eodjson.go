// Package eodjson writes end-of-day pages as marketstack's JSON array of
// records, by hand: a page is encoded once, when it is read from the store,
// and kept in that form by caches, so serving it again costs no encoding
// and no reflection. A Page can also keep the one value the HTTP layer
// derives from it (its ETag), so repeated hits need not hash it again.
package eodjson

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/jsonstring"
)

// Page is an EOD page already encoded as marketstack's JSON array of
// end-of-day records. Caches keep this form, so a cache hit costs no
// encoding and no reflection: the HTTP layer only wraps Data in an envelope.
type Page struct {
	Data  []byte // JSON array of records
	Count int
	Total int64
	// closed is Data followed by '}' in the same memory (see Closed); nil
	// for a page not made by Encode or Decoded.
	closed []byte
	// derived, shared by copies of a cached page, keeps one value the HTTP
	// layer derives from the page (its ETag), so repeated hits of the same
	// page need not recompute it.
	derived *atomic.Pointer[derivedValue]
}

type derivedValue struct{ key, value string }

// Memoized returns e able to keep a derived value (see Derived); caches
// call it on the pages they keep.
func (e Page) Memoized() Page {
	if e.derived == nil {
		e.derived = new(atomic.Pointer[derivedValue])
	}
	return e
}

// Derived returns compute's result for key, computing it once per page
// when the page is Memoized. key must name everything besides the page
// that the value depends on. It is bytes so that a caller can build it on
// the stack: a hit compares it without making a string of it.
func (e Page) Derived(key []byte, compute func() string) string {
	if e.derived == nil {
		return compute()
	}
	if d := e.derived.Load(); d != nil && d.key == string(key) {
		return d.value
	}
	v := compute()
	e.derived.Store(&derivedValue{key: string(key), value: v})
	return v
}

// Closed returns Data followed by '}', the brace that closes the envelope
// an answer wraps the page in. For a page made by Encode or Decoded it is
// the page's own memory, so an answer goes out as its envelope's head and
// this, without a copy of the page (37 KB for 100 records) per hit.
func (e Page) Closed() []byte {
	if e.closed != nil {
		return e.closed
	}
	return append(e.Data[:len(e.Data):len(e.Data)], '}')
}

// Encode encodes a page.
func Encode(p marketdata.EODPage) Page {
	// ~420 bytes per record keeps appends from regrowing the buffer.
	b := make([]byte, 0, 3+len(p.Bars)*420)
	b = append(b, '[')
	for i := range p.Bars {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendBar(b, &p.Bars[i])
	}
	b = append(b, ']', '}')
	return Page{Data: b[: len(b)-1 : len(b)-1], Count: len(p.Bars), Total: p.Total, closed: b}
}

// Decoded is the page whose JSON array is data, as a cache read it back;
// data becomes the page's.
func Decoded(data []byte, count int, total int64) Page {
	closed := append(data, '}')
	return Page{Data: closed[:len(data):len(data)], Count: count, Total: total, closed: closed}
}

// AppendBar appends one end-of-day record in marketstack's field order,
// with the spec's extra fields, and the date as YYYY-MM-DDT00:00:00+0000.
func AppendBar(b []byte, bar *marketdata.Bar) []byte {
	b = AppendNumberField(b, `{"open":`, bar.Open)
	b = AppendNumberField(b, `,"high":`, bar.High)
	b = AppendNumberField(b, `,"low":`, bar.Low)
	b = AppendNumberField(b, `,"close":`, bar.Close)
	b = AppendNumberField(b, `,"volume":`, bar.Volume)
	if bar.AssetType == marketdata.AssetIndex {
		// marketstack adjusts no index level: adj_close repeats close and
		// the other adjusted fields are null.
		b = AppendNumberField(b, `,"adj_high":null,"adj_low":null,"adj_close":`, bar.Close)
		b = append(b, `,"adj_open":null,"adj_volume":null`...)
	} else {
		b = AppendNumberField(b, `,"adj_high":`, bar.AdjHigh)
		b = AppendNumberField(b, `,"adj_low":`, bar.AdjLow)
		b = AppendNumberField(b, `,"adj_close":`, bar.AdjClose)
		b = AppendNumberField(b, `,"adj_open":`, bar.AdjOpen)
		b = AppendNumberField(b, `,"adj_volume":`, bar.AdjVolume)
	}
	b = AppendNumberField(b, `,"split_factor":`, bar.SplitFactor)
	b = AppendNumberField(b, `,"dividend":`, bar.Dividend)
	b = AppendStringField(b, `,"name":`, bar.Name)
	b = AppendStringField(b, `,"symbol":`, bar.Symbol)
	b = AppendStringField(b, `,"exchange_code":`, bar.ExchangeCode)
	b = AppendStringField(b, `,"exchange":`, bar.Exchange)
	b = AppendStringField(b, `,"asset_type":`, bar.AssetType)
	b = AppendStringField(b, `,"price_currency":`, bar.PriceCurrency)
	b = append(b, `,"date":"`...)
	b = AppendTimestamp(b, bar.Date)
	b = append(b, `"}`...)
	return b
}

// AppendTimestamp appends marketstack's date form YYYY-MM-DDT00:00:00+0000.
func AppendTimestamp(b []byte, t time.Time) []byte {
	b = t.UTC().AppendFormat(b, time.DateOnly)
	return append(b, "T00:00:00+0000"...)
}

// AppendNumberField appends key, the opening of a JSON member as it is
// written (such as `,"high":`), and f as appendNumber writes it.
func AppendNumberField(b []byte, key string, f float64) []byte {
	return appendNumber(append(b, key...), f)
}

// AppendStringField appends key, the opening of a JSON member as it is
// written (such as `,"symbol":`), and s as a JSON string.
func AppendStringField(b []byte, key, s string) []byte {
	return jsonstring.Append(append(b, key...), s)
}

// appendNumber writes a float as a JSON number in its shortest exact form.
// The store holds no NaN or infinity; should one appear it is written as 0
// rather than as text that no JSON parser accepts.
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
