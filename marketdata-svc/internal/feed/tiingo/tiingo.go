// Package tiingo is the sync adapter of Tiingo's End-of-Day API:
// /tiingo/daily/{ticker}/prices with startDate and endDate, whose rows
// carry the day's divCash and splitFactor. The token goes in the
// Authorization header ("Token ..."), never in the URL.
package tiingo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
)

// Name, DefaultURL and TokenParam configure the adapter's client; an
// empty TokenParam sends the token as a header.
const (
	Name       = "tiingo"
	DefaultURL = "https://api.tiingo.com"
	TokenParam = ""
)

// Provider is the Tiingo adapter, over its client.
type Provider struct{ *feed.Client }

// New returns the adapter sending its requests through c.
func New(c *feed.Client) *Provider { return &Provider{c} }

type priceRow struct {
	feed.JSONBar
	DivCash     feed.Number `json:"divCash"`
	SplitFactor feed.Number `json:"splitFactor"`
}

// History reads symbol's prices; splits and dividends ride on the rows of
// their ex-dates (splitFactor other than 1, divCash above 0), and the
// load takes them from there. Adjusted columns are ignored: the store
// computes its own from the actions.
func (p *Provider) History(ctx context.Context, symbol string, w feed.Window) (feed.History, error) {
	var h feed.History
	body, err := p.Get(ctx, "/tiingo/daily/"+url.PathEscape(strings.ToLower(symbol))+"/prices", url.Values{
		"startDate": {w.From.Format(time.DateOnly)}, "endDate": {w.To.Format(time.DateOnly)},
	}, nil)
	if err != nil {
		return h, err
	}
	defer body.Close()
	var rows []priceRow
	if err := json.NewDecoder(body).Decode(&rows); err != nil {
		return h, fmt.Errorf("%s: unreadable answer: %w", Name, err)
	}
	for _, r := range rows {
		rec := r.Record(symbol)
		rec.SplitFactor, rec.Dividend = r.SplitFactor, r.DivCash
		h.Records = append(h.Records, rec)
	}
	return h, nil
}

// Meta is the part of /tiingo/daily/{ticker} a sync reads.
type Meta struct {
	Ticker       string `json:"ticker"`
	Name         string `json:"name"`
	ExchangeCode string `json:"exchangeCode"`
	StartDate    string `json:"startDate"`
	EndDate      string `json:"endDate"`
}

// Meta reads symbol's metadata: whether Tiingo knows it (ErrUnknownSymbol),
// its name and the span of its prices.
func (p *Provider) Meta(ctx context.Context, symbol string) (Meta, error) {
	var m Meta
	body, err := p.Get(ctx, "/tiingo/daily/"+url.PathEscape(strings.ToLower(symbol)), nil, nil)
	if err != nil {
		return m, err
	}
	defer body.Close()
	if err := json.NewDecoder(body).Decode(&m); err != nil {
		return m, fmt.Errorf("%s: unreadable answer: %w", Name, err)
	}
	return m, nil
}

// FirstDay is the first day of symbol's prices, from its metadata: a
// backfill asks from there.
func (p *Provider) FirstDay(ctx context.Context, symbol string) (time.Time, error) {
	m, err := p.Meta(ctx, symbol)
	if err != nil {
		return time.Time{}, err
	}
	d, err := feed.ParseDate(m.StartDate)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %s metadata: %w", Name, symbol, err)
	}
	return d, nil
}
