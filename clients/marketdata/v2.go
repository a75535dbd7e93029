package marketdataclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/internal/transport"
	"github.com/tickerdesk/tickerdesk/clients/marketdata/marketdataapi"
	"github.com/tickerdesk/tickerdesk/clients/marketdata/marketdatav2api"
)

// V2 calls marketdata-svc's /v2 API, marketstack v2's shapes. Its wire
// layer, marketdatav2api, is generated from the /v2 document as
// marketdataapi is from /v1; it takes the same options as Client and gives
// the same typed errors, retries and redaction. It is safe for concurrent
// use.
type V2 struct {
	api *marketdatav2api.ClientWithResponses
	key string
}

// NewV2 returns a /v2 client of the marketdata-svc at baseURL.
func NewV2(baseURL string, opts ...Option) (*V2, error) {
	o, doer, err := transport.New("marketdata v2 client", baseURL, opts)
	if err != nil {
		return nil, err
	}
	api, err := marketdatav2api.NewClientWithResponses(baseURL,
		marketdatav2api.WithHTTPClient(doer),
		marketdatav2api.WithRequestEditorFn(withAccessKey(o.Key)))
	if err != nil {
		return nil, fmt.Errorf("marketdata v2 client: %w", err)
	}
	return &V2{api: api, key: o.Key}, nil
}

// API returns the generated /v2 client behind c, for the endpoints V2 does
// not wrap; as with Client.API, its errors are not redacted.
func (c *V2) API() *marketdatav2api.ClientWithResponses { return c.api }

// EOD yields every record matching p (GET /v2/eod), a page at a time, as
// Client.EOD does for /v1.
func (c *V2) EOD(ctx context.Context, p EODParams) iter.Seq2[EOD, error] {
	params := marketdatav2api.ListEODParams{Symbols: strings.Join(p.Symbols, ","),
		DateFrom: optional(p.DateFrom), DateTo: optional(p.DateTo), Sort: optional(p.Sort), Exchange: optional(p.Exchange), Limit: optionalInt(p.Limit)}
	return paged(func(offset int) (page[marketdatav2api.EOD], error) {
		params.Offset = optional(strconv.Itoa(offset))
		return get[page[marketdatav2api.EOD]](c.key, "list eod", func() (*http.Response, error) { return c.api.ListEOD(ctx, &params) })
	}, func(r marketdatav2api.EOD) (EOD, error) { return eodFrom(marketdataapi.EOD(r)) })
}

// IntradayParams selects intraday bars.
type IntradayParams struct {
	// Symbols are 1..100 symbols.
	Symbols []string
	// DateFrom and DateTo bound the minutes, inclusive: YYYY-MM-DD (the
	// exchange's day), ISO 8601, or YYYY-MM-DD HH:MM[:SS] (UTC).
	DateFrom, DateTo string
	// Interval is the bar length (1min ... 24hour); empty is 1hour.
	Interval string
	// AfterHours includes the minutes outside the regular session.
	AfterHours bool
	// Sort is DESC (the default) or ASC.
	Sort string
	// Exchange keeps only this exchange's listings (a MIC).
	Exchange string
	// Limit is the page size, 1..1000; 0 means the server's 100.
	Limit int
}

// IntradayBar is one bar of one symbol.
type IntradayBar struct {
	Symbol string
	// Exchange is the MIC of the listing exchange.
	Exchange string
	// Date is the start of the bucket, UTC.
	Date                           time.Time
	Open, High, Low, Close, Volume float64
}

// Intraday yields every bar matching p (GET /v2/intraday), a page at a
// time.
func (c *V2) Intraday(ctx context.Context, p IntradayParams) iter.Seq2[IntradayBar, error] {
	params := marketdatav2api.IntradayParams{Symbols: strings.Join(p.Symbols, ","),
		DateFrom: optional(p.DateFrom), DateTo: optional(p.DateTo), Sort: optional(p.Sort), Exchange: optional(p.Exchange), Limit: optionalInt(p.Limit)}
	if p.Interval != "" {
		iv := marketdatav2api.IntradayParamsInterval(p.Interval)
		params.Interval = &iv
	}
	if p.AfterHours {
		ah := marketdatav2api.IntradayParamsAfterHours("true")
		params.AfterHours = &ah
	}
	return paged(func(offset int) (page[marketdatav2api.Intraday], error) {
		params.Offset = optional(strconv.Itoa(offset))
		return get[page[marketdatav2api.Intraday]](c.key, "intraday", func() (*http.Response, error) { return c.api.Intraday(ctx, &params) })
	}, func(r marketdatav2api.Intraday) (IntradayBar, error) {
		date, err := time.Parse(eodDateLayout, r.Date)
		if err != nil {
			return IntradayBar{}, fmt.Errorf("intraday %s: date: %w", r.Symbol, err)
		}
		return IntradayBar{Symbol: r.Symbol, Exchange: r.Exchange, Date: date.UTC(), Open: r.Open, High: r.High, Low: r.Low, Close: r.Close, Volume: r.Volume}, nil
	})
}

// TickersParams selects tickers of /v2/tickerslist.
type TickersParams struct {
	// Search matches symbol and name, case-insensitively.
	Search string
	// Exchange keeps only this exchange's listings (a MIC).
	Exchange string
	// Limit is the page size, 1..1000; 0 means the server's 100.
	Limit int
}

// TickerListItem is one ticker of /v2/tickerslist.
type TickerListItem struct {
	Ticker, Name        string
	HasIntraday, HasEOD bool
	// ExchangeMIC is the listing exchange's MIC, empty when unknown.
	ExchangeMIC string
}

type tickerListWire struct {
	Name          string `json:"name"`
	Ticker        string `json:"ticker"`
	HasIntraday   bool   `json:"has_intraday"`
	HasEOD        bool   `json:"has_eod"`
	StockExchange *struct {
		MIC string `json:"mic"`
	} `json:"stock_exchange"`
}

// Tickers yields every ticker matching p (GET /v2/tickerslist), a page at
// a time.
func (c *V2) Tickers(ctx context.Context, p TickersParams) iter.Seq2[TickerListItem, error] {
	params := marketdatav2api.ListTickersV2Params{Search: optional(p.Search), Exchange: optional(p.Exchange), Limit: optionalInt(p.Limit)}
	return paged(func(offset int) (page[tickerListWire], error) {
		params.Offset = optional(strconv.Itoa(offset))
		return get[page[tickerListWire]](c.key, "tickers list", func() (*http.Response, error) { return c.api.ListTickersV2(ctx, &params) })
	}, func(r tickerListWire) (TickerListItem, error) {
		t := TickerListItem{Ticker: r.Ticker, Name: r.Name, HasIntraday: r.HasIntraday, HasEOD: r.HasEOD}
		if r.StockExchange != nil {
			t.ExchangeMIC = r.StockExchange.MIC
		}
		return t, nil
	})
}

// TickerInfo is GET /v2/tickerinfo: the ticker's details (company facts the
// service has no source for are nil).
func (c *V2) TickerInfo(ctx context.Context, ticker string) (marketdatav2api.TickerInfo, error) {
	res, err := get[struct {
		Data marketdatav2api.TickerInfo `json:"data"`
	}](c.key, "ticker info", func() (*http.Response, error) {
		return c.api.TickerInfo(ctx, &marketdatav2api.TickerInfoParams{Ticker: ticker})
	})
	return res.Data, err
}

// StockPrice is GET /v2/stockprice: the ticker's latest price and where it
// comes from (intraday or eod).
func (c *V2) StockPrice(ctx context.Context, ticker string) (marketdatav2api.StockPrice, error) {
	res, err := get[struct {
		Data []marketdatav2api.StockPrice `json:"data"`
	}](c.key, "stock price", func() (*http.Response, error) {
		return c.api.StockPrice(ctx, &marketdatav2api.StockPriceParams{Ticker: ticker})
	})
	if err == nil && len(res.Data) != 1 {
		err = fmt.Errorf("stock price: %d items, want 1", len(res.Data))
	}
	if err != nil {
		return marketdatav2api.StockPrice{}, err
	}
	return res.Data[0], nil
}

// IndexList yields the benchmark code of every index carried (GET
// /v2/indexlist), a page at a time.
func (c *V2) IndexList(ctx context.Context) iter.Seq2[string, error] {
	var params marketdatav2api.IndexListParams
	type item struct {
		Benchmark string `json:"benchmark"`
	}
	return paged(func(offset int) (page[item], error) {
		params.Offset = optional(strconv.Itoa(offset))
		return get[page[item]](c.key, "index list", func() (*http.Response, error) { return c.api.IndexList(ctx, &params) })
	}, func(r item) (string, error) { return r.Benchmark, nil })
}

// IndexInfo is GET /v2/indexinfo: the index's latest close and its changes.
func (c *V2) IndexInfo(ctx context.Context, index string) (marketdatav2api.IndexInfo, error) {
	res, err := get[[]marketdatav2api.IndexInfo](c.key, "index info", func() (*http.Response, error) {
		return c.api.IndexInfo(ctx, &marketdatav2api.IndexInfoParams{Index: index})
	})
	if err == nil && len(res) != 1 {
		err = fmt.Errorf("index info: %d items, want 1", len(res))
	}
	if err != nil {
		return marketdatav2api.IndexInfo{}, err
	}
	return res[0], nil
}

// page is marketstack's list envelope of items W.
type page[W any] struct {
	Pagination struct{ Limit, Offset, Count, Total int }
	Data       []W
}

// paged yields every item of the pages fetch returns, converted by conv,
// fetching by offset as the loop asks for more; it stops at the first
// error, which it yields with a zero item.
func paged[W, R any](fetch func(offset int) (page[W], error), conv func(W) (R, error)) iter.Seq2[R, error] {
	return func(yield func(R, error) bool) {
		var zero R
		for offset := 0; ; {
			pg, err := fetch(offset)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, w := range pg.Data {
				r, err := conv(w)
				if !yield(r, err) || err != nil {
					return
				}
			}
			p := pg.Pagination
			offset = p.Offset + p.Count
			if p.Count == 0 || len(pg.Data) == 0 || offset >= p.Total {
				return
			}
		}
	}
}

// get sends one request and decodes its 200 answer into T; another status
// is *Error. It reads the answer itself rather than through the generated
// ...WithResponse functions, which fail outright on a Retry-After that is
// an HTTP-date, losing the error's code. op names the call in errors,
// which never quote key.
func get[T any](key, op string, send func() (*http.Response, error)) (T, error) {
	var v T
	resp, err := send()
	if err != nil {
		return v, fmt.Errorf("%s: %w", op, redactErr(err, key))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return v, fmt.Errorf("%s: %w", op, redactErr(err, key))
	}
	if resp.StatusCode != http.StatusOK {
		return v, errorFrom(resp, body, key)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("%s: decode: %w", op, err)
	}
	return v, nil
}

// optional is s as an optional parameter: nil when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optionalInt is n as an optional parameter: nil when 0.
func optionalInt(n int) *string {
	if n == 0 {
		return nil
	}
	return optional(strconv.Itoa(n))
}
