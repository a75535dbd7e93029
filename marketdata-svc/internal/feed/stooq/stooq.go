// Package stooq is the sync adapter of Stooq's free daily CSV download
// (/q/d/l/?s=aapl.us&i=d&d1=YYYYMMDD&d2=YYYYMMDD), one request per symbol
// and no key. Stooq has no corporate actions here: its prices are bars
// only, and splits and dividends come from another provider or an import.
package stooq

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
)

// Name and DefaultURL configure the adapter's client; Stooq needs no token.
const (
	Name       = "stooq"
	DefaultURL = "https://stooq.com"
	TokenParam = ""
)

// markets maps MICs to Stooq's symbol suffixes.
var markets = map[string]string{
	"XNAS": "us", "XNYS": "us", "XASE": "us", "ARCX": "us", "BATS": "us",
	"XLON": "uk", "XETR": "de", "XTKS": "jp", "XHKG": "hk",
}

// Provider is the Stooq adapter, over its client.
type Provider struct{ *feed.Client }

// New returns the adapter sending its requests through c.
func New(c *feed.Client) *Provider { return &Provider{c} }

// ticker is symbol as Stooq spells it: AAPL is aapl.us, VOD.XLON vod.uk.
func ticker(symbol string) string {
	if base, mic, ok := strings.Cut(symbol, "."); ok {
		if m, ok := markets[mic]; ok {
			return strings.ToLower(base) + "." + m
		}
		return strings.ToLower(symbol)
	}
	return strings.ToLower(symbol) + ".us"
}

// History reads symbol's daily CSV within w. Stooq answers a symbol it
// does not know with a 200 and "No data".
func (p *Provider) History(ctx context.Context, symbol string, w feed.Window) (feed.History, error) {
	var h feed.History
	body, err := p.Get(ctx, "/q/d/l/", url.Values{
		"s": {ticker(symbol)}, "i": {"d"}, "d1": {w.From.Format("20060102")}, "d2": {w.To.Format("20060102")},
	}, nil)
	if err != nil {
		return h, err
	}
	defer body.Close()
	r := csv.NewReader(body)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return h, feed.ErrUnknownSymbol
	}
	if err != nil {
		return h, fmt.Errorf("%s: unreadable answer: %w", Name, err)
	}
	if len(header) == 1 && strings.EqualFold(strings.TrimSpace(header[0]), "No data") {
		return h, feed.ErrUnknownSymbol
	}
	col := map[string]int{}
	for i, c := range header {
		col[strings.ToLower(strings.TrimSpace(c))] = i
	}
	for _, c := range []string{"date", "open", "high", "low", "close"} {
		if _, ok := col[c]; !ok {
			return h, fmt.Errorf("%s: answer has no %s column", Name, c)
		}
	}
	field := func(rec []string, name string) string {
		i, ok := col[name]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return h, nil
		}
		if err != nil {
			h.Rejects = append(h.Rejects, feed.Reject{Provider: Name, Symbol: symbol, Reason: err.Error()})
			continue
		}
		num := func(name string) feed.Number {
			n := feed.ParseNumber(field(rec, name))
			if !n.Set && name != "volume" {
				n.Bad = `""` // an empty price is malformed, not absent
			}
			return n
		}
		h.Records = append(h.Records, feed.Record{Symbol: symbol, Date: field(rec, "date"), Open: num("open"), High: num("high"),
			Low: num("low"), Close: num("close"), Volume: num("volume")})
	}
}
