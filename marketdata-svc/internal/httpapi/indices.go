package httpapi

import (
	"context"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// indexListJSON is an item of v2's /indexlist: the benchmark code that
// /indexinfo takes, here the index's symbol.
type indexListJSON struct {
	Benchmark string `json:"benchmark"`
}

// indexInfoJSON is an item of v2's /indexinfo: the latest close and its
// changes, as strings like marketstack's; a change whose earlier close
// the history lacks is null, and so is the region, which nothing here
// records.
type indexInfoJSON struct {
	Benchmark string  `json:"benchmark"`
	Region    *string `json:"region"`
	Country   *string `json:"country"`
	Price     string  `json:"price"`
	changes
	Date string `json:"date"`
}

// percentChange is the change from then to now in percent, two decimals.
func percentChange(now float64, then *float64) *string {
	if then == nil || *then == 0 {
		return nil
	}
	v := strconv.FormatFloat((now-*then) / *then * 100, 'f', 2, 64) + "%"
	return &v
}

func newIndexInfo(x marketdata.IndexQuote) indexInfoJSON {
	out := indexInfoJSON{Benchmark: x.Ticker.Symbol, Price: strconv.FormatFloat(x.Close, 'f', -1, 64), Date: marketdata.FormatDate(x.Date),
		changes: changesFrom(x.Close, x.Previous, x.Week, x.Month, x.Year)}
	switch {
	case x.Ticker.Exchange != nil && x.Ticker.Exchange.Country != "":
		out.Country = optional(x.Ticker.Exchange.Country)
	case x.Ticker.Country != "":
		out.Country = optional(x.Ticker.Country)
	}
	return out
}

// indexList serves /v2/indexlist: the indices carried, paged.
func (s *Server) indexList(c *gin.Context) {
	sendPage(s, c, parseQuery(c.Request.URL.RawQuery), func(ctx context.Context, page pagination.Page) ([]marketdata.IndexQuote, int64, error) {
		res, err := s.o.Store.Indices(ctx, marketdata.IndexQuery{Limit: page.Limit, Offset: page.Offset})
		return res.Indices, res.Total, err
	}, func(x marketdata.IndexQuote) indexListJSON { return indexListJSON{x.Ticker.Symbol} })
}

// indexInfo serves /v2/indexinfo?index=: a one-item array, as marketstack
// answers it.
func (s *Server) indexInfo(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw := requiredParam(p, "index")
	if err := p.err(); err != nil {
		s.writeError(c, err)
		return
	}
	x, ok := lookupPath(s, c, raw, marketdata.NormaliseSymbol, func(ctx context.Context, sym string) (marketdata.IndexQuote, error) {
		res, err := s.o.Store.Indices(ctx, marketdata.IndexQuery{Symbol: sym, Limit: 1})
		if err != nil {
			return marketdata.IndexQuote{}, err
		}
		return res.Indices[0], nil
	})
	if !ok {
		return
	}
	s.sendValue(c, []indexInfoJSON{newIndexInfo(x)})
}
