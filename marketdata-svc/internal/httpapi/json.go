package httpapi

import (
	"strconv"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// Response shapes, in marketstack's field names.

type envelope[T any] struct {
	Pagination pagination.Envelope `json:"pagination"`
	Data       T                   `json:"data"`
}

type stockExchangeJSON struct {
	Name        string `json:"name"`
	Acronym     string `json:"acronym"`
	MIC         string `json:"mic"`
	Country     string `json:"country"`
	CountryCode string `json:"country_code"`
	City        string `json:"city"`
	Website     string `json:"website"`
}

// tickerJSON is v1's ticker: its head and the exchange it trades on.
type tickerJSON struct {
	tickerHeadJSON
	StockExchange *stockExchangeJSON `json:"stock_exchange"`
}

// tickerHeadJSON is a ticker without its exchange; v2's
// /tickers/{symbol}/eod wraps its records in it.
type tickerHeadJSON struct {
	tickerBriefJSON
	Country *string `json:"country"`
}

type timezoneJSON struct {
	Timezone string `json:"timezone"`
	Abbr     string `json:"abbr"`
	AbbrDST  string `json:"abbr_dst"`
}

type currencyJSON struct {
	Code   string `json:"code"`
	Symbol string `json:"symbol"`
	Name   string `json:"name"`
}

// currencyV2JSON is v2's currency, which adds the native symbol.
type currencyV2JSON struct {
	Code         string `json:"code"`
	Symbol       string `json:"symbol"`
	SymbolNative string `json:"symbol_native"`
	Name         string `json:"name"`
}

type exchangeJSON struct {
	stockExchangeJSON
	Timezone *timezoneJSON `json:"timezone"`
	Currency *currencyJSON `json:"currency"`
}

// tickerBriefJSON is a ticker listed under its exchange, which need not be
// repeated.
type tickerBriefJSON struct {
	Name        string `json:"name"`
	Symbol      string `json:"symbol"`
	HasIntraday bool   `json:"has_intraday"`
	HasEOD      bool   `json:"has_eod"`
}

type splitJSON struct {
	Date        string  `json:"date"`
	SplitFactor float64 `json:"split_factor"`
	Symbol      string  `json:"symbol"`
}

type dividendJSON struct {
	Date     string  `json:"date"`
	Dividend float64 `json:"dividend"`
	Symbol   string  `json:"symbol"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newStockExchange(x *marketdata.Exchange) *stockExchangeJSON {
	if x == nil {
		return nil
	}
	return &stockExchangeJSON{Name: x.Name, Acronym: x.Acronym, MIC: x.MIC, Country: x.Country, CountryCode: x.CountryCode, City: x.City, Website: x.Website}
}

func newTimezone(tz marketdata.Timezone) timezoneJSON {
	return timezoneJSON{Timezone: tz.Name, Abbr: tz.Abbr, AbbrDST: tz.AbbrDST}
}

func newCurrency(c marketdata.Currency) currencyJSON {
	return currencyJSON{Code: c.Code, Symbol: c.Symbol, Name: c.Name}
}

func newExchange(x marketdata.Exchange) exchangeJSON {
	out := exchangeJSON{stockExchangeJSON: *newStockExchange(&x)}
	if x.Timezone != "" {
		tz := newTimezone(marketdata.TimezoneOf(x.Timezone))
		out.Timezone = &tz
	}
	if x.Currency != "" {
		c := newCurrency(marketdata.CurrencyOf(x.Currency))
		out.Currency = &c
	}
	return out
}

func newTicker(t marketdata.Ticker) tickerJSON {
	return tickerJSON{tickerHeadJSON: newTickerHead(t), StockExchange: newStockExchange(t.Exchange)}
}

func newTickerHead(t marketdata.Ticker) tickerHeadJSON {
	return tickerHeadJSON{tickerBriefJSON: newTickerBrief(t), Country: optional(t.Country)}
}

func newTickerBrief(t marketdata.Ticker) tickerBriefJSON {
	return tickerBriefJSON{Name: t.Name, Symbol: t.Symbol, HasIntraday: t.HasIntraday, HasEOD: t.HasEOD}
}

// appendPagination appends {"pagination":{...}, "data": — the start of an
// envelope, written by hand on the EOD hot path.
func appendPagination(b []byte, limit, offset, count int, total int64) []byte {
	b = append(b, `{"pagination":{"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(count), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, `},"data":`...)
}
