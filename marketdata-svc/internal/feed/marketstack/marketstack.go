// Package marketstack is the sync adapter of marketstack's v2 API, the
// service Tickerdesk replaces: /eod with date_from and date_to, paged by
// limit=1000 and offset, /splits, /dividends, and /tickers to list an
// exchange. The key goes in the access_key parameter.
package marketstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// Name, DefaultURL and TokenParam configure the adapter's client.
const (
	Name       = "marketstack"
	DefaultURL = "https://api.marketstack.com/v2"
	TokenParam = "access_key"
	pageLimit  = 1000
)

// Provider is the marketstack adapter, over its client.
type Provider struct{ *feed.Client }

// New returns the adapter sending its requests through c.
func New(c *feed.Client) *Provider { return &Provider{c} }

type page[T any] struct {
	Pagination struct {
		Limit, Offset, Count, Total int
	} `json:"pagination"`
	Data []T `json:"data"`
}

type eodRow struct {
	Symbol string `json:"symbol"`
	feed.JSONBar
}

type splitRow struct {
	Symbol      string      `json:"symbol"`
	Date        string      `json:"date"`
	SplitFactor feed.Number `json:"split_factor"`
}

type dividendRow struct {
	Symbol   string      `json:"symbol"`
	Date     string      `json:"date"`
	Dividend feed.Number `json:"dividend"`
}

// History pages through /eod, then /splits and /dividends, for symbol.
func (p *Provider) History(ctx context.Context, symbol string, w feed.Window) (feed.History, error) {
	var h feed.History
	q := func() url.Values {
		return url.Values{"symbols": {symbol}, "date_from": {w.From.Format(time.DateOnly)}, "date_to": {w.To.Format(time.DateOnly)}}
	}
	err := pages(ctx, p, "/eod", q(), func(r eodRow) {
		h.Records = append(h.Records, r.Record(symbol))
	})
	if err != nil {
		return h, err
	}
	err = pages(ctx, p, "/splits", q(), func(r splitRow) {
		d, err := feed.ParseDate(r.Date)
		if err != nil || r.SplitFactor.Bad != "" || !(r.SplitFactor.V > 0) {
			h.Rejects = append(h.Rejects, feed.Reject{Provider: Name, Symbol: symbol, Date: r.Date, Reason: "malformed split"})
			return
		}
		h.Splits = append(h.Splits, marketdata.Split{Symbol: symbol, Date: d, Factor: r.SplitFactor.V})
	})
	if err != nil {
		return h, err
	}
	err = pages(ctx, p, "/dividends", q(), func(r dividendRow) {
		d, err := feed.ParseDate(r.Date)
		if err != nil || r.Dividend.Bad != "" || r.Dividend.V < 0 {
			h.Rejects = append(h.Rejects, feed.Reject{Provider: Name, Symbol: symbol, Date: r.Date, Reason: "malformed dividend"})
			return
		}
		h.Dividends = append(h.Dividends, marketdata.Dividend{Symbol: symbol, Date: d, Amount: r.Dividend.V})
	})
	return h, err
}

// Symbols lists the tickers of exchange (a MIC) through /tickers.
func (p *Provider) Symbols(ctx context.Context, exchange string) ([]string, error) {
	var out []string
	err := pages(ctx, p, "/tickers", url.Values{"exchange": {exchange}}, func(r struct {
		Symbol string `json:"symbol"`
	}) {
		out = append(out, r.Symbol)
	})
	return out, err
}

// pages reads every page of path, limit=1000 at a time, passing each row
// to each.
func pages[T any](ctx context.Context, p *Provider, path string, q url.Values, each func(T)) error {
	for offset := 0; ; {
		q.Set("limit", strconv.Itoa(pageLimit))
		q.Set("offset", strconv.Itoa(offset))
		body, err := p.Get(ctx, path, q, unknownSymbol)
		if err != nil {
			return err
		}
		var pg page[T]
		err = json.NewDecoder(body).Decode(&pg)
		body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: unreadable answer: %w", Name, path, err)
		}
		for _, r := range pg.Data {
			each(r)
		}
		offset += len(pg.Data)
		if len(pg.Data) == 0 || offset >= pg.Pagination.Total {
			return nil
		}
	}
}

// unknownSymbol reads marketstack's 422 no_valid_symbols_provided, its
// answer for a symbol it does not know.
func unknownSymbol(status int, body []byte) error {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if status == 422 && json.Unmarshal(body, &e) == nil && e.Error.Code == "no_valid_symbols_provided" {
		return feed.ErrUnknownSymbol
	}
	return nil
}
