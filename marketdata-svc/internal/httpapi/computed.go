package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// This file serves v2 functions computed from the data the other routes
// serve: /tickerinfo from the ticker, /stockprice from its latest intraday
// or EOD bar (indices.go: /indexlist and /indexinfo). Each reads through the same store, cache and limits as the route its
// data comes from; a field with no source here is null, never invented.

// tickerInfoJSON is v2's /tickerinfo data. This service holds a ticker's
// name, class and listing only: the company facts are null.
type tickerInfoJSON struct {
	Name                     string               `json:"name"`
	Ticker                   string               `json:"ticker"`
	ItemType                 string               `json:"item_type"`
	Sector                   *string              `json:"sector"`
	Industry                 *string              `json:"industry"`
	ExchangeCode             *string              `json:"exchange_code"`
	FullTimeEmployees        *string              `json:"full_time_employees"`
	IPODate                  *string              `json:"ipo_date"`
	DateFounded              *string              `json:"date_founded"`
	KeyExecutives            []struct{}           `json:"key_executives"`
	Incorporation            *string              `json:"incorporation"`
	IncorporationDescription *string              `json:"incorporation_description"`
	StartFiscal              *string              `json:"start_fiscal"`
	EndFiscal                *string              `json:"end_fiscal"`
	ReportingCurrency        *string              `json:"reporting_currency"`
	Address                  *struct{}            `json:"address"`
	PostAddress              *struct{}            `json:"post_address"`
	Phone                    *string              `json:"phone"`
	Website                  *string              `json:"website"`
	PreviousNames            []string             `json:"previous_names"`
	About                    *string              `json:"about"`
	Mission                  *string              `json:"mission"`
	Vision                   *string              `json:"vision"`
	StockExchanges           []tickerInfoExchange `json:"stock_exchanges"`
}

type tickerInfoExchange struct {
	City         string `json:"city"`
	Country      string `json:"country"`
	Website      string `json:"website"`
	Acronym1     string `json:"acronym1"`
	Alpha2Code   string `json:"alpha2_code"`
	ExchangeMIC  string `json:"exchange_mic"`
	ExchangeName string `json:"exchange_name"`
}

func newTickerInfo(t marketdata.Ticker) tickerInfoJSON {
	out := tickerInfoJSON{Name: t.Name, Ticker: t.Symbol, ItemType: itemType(t.AssetType), StockExchanges: []tickerInfoExchange{}}
	if x := t.Exchange; x != nil {
		out.ExchangeCode = optional(x.Acronym)
		out.StockExchanges = append(out.StockExchanges, tickerInfoExchange{City: x.City, Country: x.Country, Website: x.Website,
			Acronym1: x.Acronym, Alpha2Code: x.CountryCode, ExchangeMIC: x.MIC, ExchangeName: x.Name})
	}
	return out
}

// tickerInfo serves /v2/tickerinfo?ticker=.
func (s *Server) tickerInfo(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw := requiredParam(p, "ticker")
	t, ok := s.queryTicker(c, p, raw)
	if !ok {
		return
	}
	s.sendValue(c, struct {
		Data tickerInfoJSON `json:"data"`
	}{newTickerInfo(t)})
}

// queryTicker answers the problems of the query p, if any, and otherwise
// looks up raw, its ticker parameter, as a path's symbol is looked up
// (404 for an unknown one); it reports false when it answered.
func (s *Server) queryTicker(c *gin.Context, p *queryParams, raw string) (marketdata.Ticker, bool) {
	return afterQuery(s, c, p, func(c *gin.Context) (marketdata.Ticker, bool) {
		return lookupPath(s, c, raw, marketdata.NormaliseSymbol, s.o.Store.Ticker)
	})
}

// Price sources of /v2/stockprice.
const (
	priceIntraday = "intraday"
	priceEOD      = "eod"
)

// stockPriceJSON is an item of v2's /stockprice. Prices are strings, as
// marketstack's document has them; source says which bar the price is the
// close of: the latest minute ("intraday"), or the latest day ("eod")
// when the key has no intraday scope or the ticker no intraday bar.
type stockPriceJSON struct {
	ExchangeCode *string `json:"exchange_code"`
	ExchangeName *string `json:"exchange_name"`
	Country      *string `json:"country"`
	Ticker       string  `json:"ticker"`
	Price        string  `json:"price"`
	Currency     string  `json:"currency"`
	TradeLast    string  `json:"trade_last"`
	Source       string  `json:"source"`
}

// stockPrice serves /v2/stockprice?ticker=[&exchange=]: the ticker's last
// known price. exchange, when given, must name the ticker's exchange, by
// acronym (marketstack's example is NASDAQ) or MIC.
func (s *Server) stockPrice(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw := requiredParam(p, "ticker")
	exchange, _ := p.single("exchange")
	t, ok := s.queryTicker(c, p, raw)
	if !ok {
		return
	}
	if exchange != "" && (t.Exchange == nil || !strings.EqualFold(exchange, t.Exchange.Acronym) && !strings.EqualFold(exchange, t.Exchange.MIC)) {
		s.writeError(c, marketdata.ErrNotFound)
		return
	}
	price, at, source, err := s.lastPrice(c, t)
	if err != nil {
		s.writeError(c, err)
		return
	}
	item := stockPriceJSON{Ticker: t.Symbol, Price: strconv.FormatFloat(price, 'f', -1, 64), Currency: t.PriceCurrency,
		TradeLast: at.UTC().Format("2006-01-02T15:04:05-0700"), Source: source}
	if x := t.Exchange; x != nil {
		item.ExchangeCode, item.ExchangeName, item.Country = optional(x.Acronym), optional(x.Name), optional(x.Country)
	}
	s.sendValue(c, struct {
		Data []stockPriceJSON `json:"data"`
	}{[]stockPriceJSON{item}})
}

// lastPrice is the close of t's latest 1-minute bar when the key may read
// intraday and one exists, else of its latest EOD bar, read as /eod/latest
// reads it (the same cached page); ErrNotFound when it has neither.
func (s *Server) lastPrice(c *gin.Context, t marketdata.Ticker) (price float64, at time.Time, source string, err error) {
	if p, _ := auth.PrincipalFrom(c.Request.Context()); p.HasScope("intraday") {
		if is, ierr := s.intradayStore(); ierr == nil {
			page, err := is.Intraday(c.Request.Context(), marketdata.IntradayQuery{Symbols: []string{t.Symbol}, Interval: 1,
				AfterHours: true, Latest: true, Sort: marketdata.SortDesc, Limit: 1})
			if err != nil && !errors.Is(err, marketdata.ErrNoValidSymbols) {
				return 0, at, "", err
			}
			if len(page.Bars) > 0 {
				b := page.Bars[0]
				return b.Close, b.Date, priceIntraday, nil
			}
		}
	}
	enc, err := s.o.EODPages.EncodedEOD(c.Request.Context(), marketdata.EODQuery{Symbols: []string{t.Symbol}, Latest: true, Sort: marketdata.SortDesc, Limit: 1})
	if errors.Is(err, marketdata.ErrNoValidSymbols) || (err == nil && enc.Count == 0) {
		err = marketdata.ErrNotFound
	}
	if err != nil {
		return 0, at, "", err
	}
	var bars []struct {
		Close float64 `json:"close"`
		Date  string  `json:"date"`
	}
	if err := json.Unmarshal(enc.Data, &bars); err != nil || len(bars) == 0 {
		return 0, at, "", fmt.Errorf("read latest eod bar: %w", err)
	}
	at, err = time.Parse("2006-01-02T15:04:05-0700", bars[0].Date)
	if err != nil {
		return 0, at, "", fmt.Errorf("read latest eod bar: %w", err)
	}
	return bars[0].Close, at, priceEOD, nil
}
