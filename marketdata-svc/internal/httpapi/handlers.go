package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// sendEOD answers an EOD query with marketstack's envelope. On a cache hit
// this is the whole per-request work: the envelope's head, then the cached
// page closed by its brace, each written as it is, so that no page is
// copied per hit.
func (s *Server) sendEOD(c *gin.Context, q marketdata.EODQuery) {
	enc, err := s.o.EODPages.EncodedEOD(c.Request.Context(), q)
	if err != nil {
		s.writeError(c, err)
		return
	}
	head := appendPagination(make([]byte, 0, 128), q.Limit, q.Offset, enc.Count, enc.Total)
	tail := enc.Closed()
	// The body is the page plus limit and offset: a cached page keeps its
	// tag, and hits do not hash tens of kilobytes each.
	var key [32]byte
	etag := enc.Derived(appendEnvelopeKey(key[:0], q.Limit, q.Offset), func() string { return etagOf(head, tail) })
	sendTaggedJSON(c, etag, cacheMarketData, head, tail)
}

// appendEnvelopeKey appends the name of what an EOD body adds to its page.
func appendEnvelopeKey(b []byte, limit, offset int) []byte {
	b = append(b, "eod:"...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(offset), 10)
}

// eodList serves /v1/eod and /v1/eod/latest.
func (s *Server) eodList(latest bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := parseQuery(c.Request.URL.RawQuery).eodQuery(latest)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendEOD(c, q)
	}
}

// eodOnDate serves /v1/eod/{date}: the records of one trading date.
// date_from and date_to are ignored there, since the path names the date.
func (s *Server) eodOnDate(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	day := pathDate(p, c.Param("date"))
	q := marketdata.EODQuery{Symbols: p.symbols("symbols", true), DateFrom: day, DateTo: day, Sort: p.sort(), Exchange: p.exchange()}
	page, ok := s.validPage(c, p)
	if !ok {
		return
	}
	q.Limit, q.Offset = page.Limit, page.Offset
	s.sendEOD(c, q)
}

// validPage ends the reading of p: it returns the page asked for, or
// answers every problem of the query and reports false.
func (s *Server) validPage(c *gin.Context, p *queryParams) (pagination.Page, bool) {
	page := p.page()
	if err := p.err(); err != nil {
		s.writeError(c, err)
		return page, false
	}
	return page, true
}

func pathDate(p *queryParams, raw string) (day time.Time) {
	day, err := marketdata.ParseDate(raw)
	if err != nil {
		p.fail("date", "invalid_date", err.Error())
	}
	return day
}

// pathTicker reads {symbol} and looks the ticker up; a symbol that cannot
// exist is simply not found.
func (s *Server) pathTicker(c *gin.Context) (marketdata.Ticker, bool) {
	return lookupPath(s, c, c.Param("symbol"), marketdata.NormaliseSymbol, s.o.Store.Ticker)
}

// afterQuery answers the problems of the query p, if any, and otherwise
// looks up the path's resource with lookup (pathTicker, pathExchange): a
// bad parameter is a 400 even on a path that names nothing. It reports
// false when it answered.
func afterQuery[T any](s *Server, c *gin.Context, p *queryParams, lookup func(*gin.Context) (T, bool)) (T, bool) {
	if err := p.err(); err != nil {
		s.writeError(c, err)
		var zero T
		return zero, false
	}
	return lookup(c)
}

// lookupPath parses raw, a path parameter, and looks it up with get. It
// answers a failure itself and reports false; a value that cannot exist
// is simply not found.
func lookupPath[T any](s *Server, c *gin.Context, raw string, parse func(string) (string, error), get func(context.Context, string) (T, error)) (T, bool) {
	var zero T
	id, err := parse(raw)
	if err != nil {
		s.writeError(c, marketdata.ErrNotFound)
		return zero, false
	}
	v, err := get(c.Request.Context(), id)
	if err != nil {
		s.writeError(c, err)
		return zero, false
	}
	return v, true
}

// tickerEOD serves /tickers/{symbol}/eod in marketstack's shape: the
// ticker object with its records under "eod".
func (s *Server) tickerEOD(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q := marketdata.EODQuery{Sort: p.sort()}
		q.DateFrom, q.DateTo = p.dateRange()
		q.Limit, q.Offset = p.limitOffset()
		t, ok := afterQuery(s, c, p, s.pathTicker)
		if !ok {
			return
		}
		q.Symbols = []string{t.Symbol}
		enc, err := s.o.EODPages.EncodedEOD(c.Request.Context(), q)
		if errors.Is(err, marketdata.ErrNoValidSymbols) {
			// A known ticker without bars has an empty series.
			enc, err = eodjson.Page{Data: []byte("[]")}, nil
		}
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendWrappedEOD(c, q, enc, tickerHeadOf(t, v))
	}
}

// sendWrappedEOD answers a page of records inside head, an object, under
// "eod": the shape of /tickers/{symbol}/eod and /exchanges/{mic}/eod.
func (s *Server) sendWrappedEOD(c *gin.Context, q marketdata.EODQuery, enc eodjson.Page, head any) {
	obj, err := json.Marshal(head)
	if err != nil {
		s.writeError(c, fmt.Errorf("encode eod head: %w", err))
		return
	}
	b := make([]byte, 0, len(obj)+len(enc.Data)+112)
	b = appendPagination(b, q.Limit, q.Offset, enc.Count, enc.Total)
	b = append(b, obj[:len(obj)-1]...)
	b = append(b, `,"eod":`...)
	b = append(b, enc.Data...)
	b = append(b, "}}"...)
	sendJSON(c, b, cacheMarketData)
}

// exchangeEOD serves /exchanges/{mic}/eod, /eod/latest and /eod/{date}:
// the EOD query of /eod restricted to the exchange, inside its object.
func (s *Server) exchangeEOD(v apiVersion, latest, onDate bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q := marketdata.EODQuery{Symbols: p.symbols("symbols", true), Sort: p.sort(), Latest: latest}
		if onDate {
			q.DateFrom = pathDate(p, c.Param("date"))
			q.DateTo = q.DateFrom
		} else {
			q.DateFrom, q.DateTo = p.dateRange()
		}
		q.Limit, q.Offset = p.limitOffset()
		x, ok := afterQuery(s, c, p, s.pathExchange)
		if !ok {
			return
		}
		q.Exchange = x.MIC
		enc, err := s.o.EODPages.EncodedEOD(c.Request.Context(), q)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendWrappedEOD(c, q, enc, exchangeOf(x, v))
	}
}

// tickerEODLatest serves /v1/tickers/{symbol}/eod/latest: one record.
func (s *Server) tickerEODLatest(c *gin.Context) {
	t, ok := s.pathTicker(c)
	if !ok {
		return
	}
	s.sendOneBar(c, marketdata.EODQuery{Symbols: []string{t.Symbol}, Latest: true, Sort: marketdata.SortDesc, Limit: 1})
}

// tickerEODOnDate serves /v1/tickers/{symbol}/eod/{date}: one record, or
// 404 when the symbol did not trade that day.
func (s *Server) tickerEODOnDate(c *gin.Context) {
	p := newQueryParams(nil)
	day := pathDate(p, c.Param("date"))
	t, ok := afterQuery(s, c, p, s.pathTicker)
	if !ok {
		return
	}
	s.sendOneBar(c, marketdata.EODQuery{Symbols: []string{t.Symbol}, DateFrom: day, DateTo: day, Sort: marketdata.SortDesc, Limit: 1})
}

func (s *Server) sendOneBar(c *gin.Context, q marketdata.EODQuery) {
	enc, err := s.o.EODPages.EncodedEOD(c.Request.Context(), q)
	if errors.Is(err, marketdata.ErrNoValidSymbols) || (err == nil && enc.Count == 0) {
		err = marketdata.ErrNotFound
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	// The single record is the encoded array without its brackets.
	sendJSON(c, enc.Data[1:len(enc.Data)-1], cacheMarketData)
}

// tickerList serves v1's /tickers (by symbols=, or by search= over symbol
// and name, optionally on one exchange=, else every ticker by symbol) and
// v2's /tickerslist, which takes no symbols= and names the symbol "ticker".
func (s *Server) tickerList(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q := marketdata.TickerQuery{Search: p.search(), Exchange: p.exchange()}
		if v == v1 {
			q.Symbols = p.symbols("symbols", false)
		}
		sendPage(s, c, p, func(ctx context.Context, page pagination.Page) ([]marketdata.Ticker, int64, error) {
			q.Limit, q.Offset = page.Limit, page.Offset
			res, err := s.o.Store.Tickers(ctx, q)
			return res.Tickers, res.Total, err
		}, func(t marketdata.Ticker) any {
			if v == v1 {
				return newTicker(t)
			}
			return newTickersListItem(t)
		})
	}
}

// tickerOne serves /tickers/{symbol}.
func (s *Server) tickerOne(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		t, ok := s.pathTicker(c)
		if !ok {
			return
		}
		if v == v2 {
			s.sendValue(c, newTickerV2(t))
			return
		}
		s.sendValue(c, newTicker(t))
	}
}

// exchangeList serves /exchanges.
func (s *Server) exchangeList(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q := marketdata.ExchangeQuery{Search: p.search()}
		sendPage(s, c, p, func(ctx context.Context, page pagination.Page) ([]marketdata.Exchange, int64, error) {
			q.Limit, q.Offset = page.Limit, page.Offset
			res, err := s.o.Store.Exchanges(ctx, q)
			return res.Exchanges, res.Total, err
		}, func(x marketdata.Exchange) any { return exchangeOf(x, v) })
	}
}

// pathExchange reads {mic}, an alias included, and looks the exchange up;
// a code that cannot exist is simply not found.
func (s *Server) pathExchange(c *gin.Context) (marketdata.Exchange, bool) {
	return lookupPath(s, c, c.Param("mic"), marketdata.ParseMIC, s.o.Store.Exchange)
}

// pageOfExchange reads the page asked for, then {mic}'s exchange
// (pathExchange); it answers a failure itself and reports false.
func (s *Server) pageOfExchange(c *gin.Context) (pagination.Page, marketdata.Exchange, bool) {
	page, ok := s.validPage(c, parseQuery(c.Request.URL.RawQuery))
	if !ok {
		return page, marketdata.Exchange{}, false
	}
	x, ok := s.pathExchange(c)
	return page, x, ok
}

// exchangeOne serves /exchanges/{mic}: the exchange object in v1, and in
// v2 a list of that one exchange (v2's document answers ExchangesResponse,
// the envelope of /exchanges).
func (s *Server) exchangeOne(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		if v == v1 {
			if x, ok := s.pathExchange(c); ok {
				s.sendValue(c, exchangeOf(x, v))
			}
			return
		}
		page, x, ok := s.pageOfExchange(c)
		if !ok {
			return
		}
		items := []marketdata.Exchange{x}
		sendList(s, c, page, items[min(page.Offset, len(items)):], int64(len(items)), newExchangeV2)
	}
}

// exchangeTickers serves /exchanges/{mic}/tickers in marketstack's shape:
// the exchange object with its tickers under "tickers".
func (s *Server) exchangeTickers(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		page, x, ok := s.pageOfExchange(c)
		if !ok {
			return
		}
		res, err := s.o.Store.Tickers(c.Request.Context(), marketdata.TickerQuery{Exchange: x.MIC, Limit: page.Limit, Offset: page.Offset})
		if err != nil && !errors.Is(err, marketdata.ErrNoValidSymbols) {
			s.writeError(c, err)
			return
		}
		tickers := make([]tickerBriefJSON, len(res.Tickers))
		for i, t := range res.Tickers {
			tickers[i] = newTickerBrief(t)
		}
		head, err := json.Marshal(exchangeOf(x, v))
		if err != nil {
			s.writeError(c, fmt.Errorf("encode exchange: %w", err))
			return
		}
		list, err := json.Marshal(tickers)
		if err != nil {
			s.writeError(c, fmt.Errorf("encode tickers: %w", err))
			return
		}
		b := appendPagination(make([]byte, 0, len(head)+len(list)+112), page.Limit, page.Offset, len(tickers), res.Total)
		b = append(b, head[:len(head)-1]...)
		b = append(b, `,"tickers":`...)
		b = append(b, list...)
		b = append(b, "}}"...)
		sendJSON(c, b, cacheMarketData)
	}
}

// actionQuery reads the parameters of /splits and /dividends. The ticker
// routes' path names the symbol, so only the others read symbols.
func actionQuery(c *gin.Context, symbols bool) (marketdata.ActionQuery, pagination.Page, error) {
	p := parseQuery(c.Request.URL.RawQuery)
	var q marketdata.ActionQuery
	if symbols {
		q.Symbols = p.symbols("symbols", true)
	}
	q.Sort = p.sort()
	q.DateFrom, q.DateTo = p.dateRange()
	page := p.page()
	q.Limit, q.Offset = page.Limit, page.Offset
	return q, page, p.err()
}

func (s *Server) splits(ctx context.Context, q marketdata.ActionQuery) ([]marketdata.Split, int64, error) {
	p, err := s.o.Store.Splits(ctx, q)
	return p.Splits, p.Total, err
}

func (s *Server) dividends(ctx context.Context, q marketdata.ActionQuery) ([]marketdata.Dividend, int64, error) {
	p, err := s.o.Store.Dividends(ctx, q)
	return p.Dividends, p.Total, err
}

func encodeSplits(v apiVersion) func([]marketdata.Split) any {
	return func(splits []marketdata.Split) any {
		if v == v1 {
			return encodeAll(splits, newSplit)
		}
		return encodeAll(splits, func(sp marketdata.Split) splitV2JSON {
			return splitV2JSON{Date: marketdata.FormatDate(sp.Date), SplitFactor: sp.Factor, StockSplit: stockSplit(sp.Factor), Symbol: sp.Symbol}
		})
	}
}

func encodeDividends(v apiVersion) func([]marketdata.Dividend) any {
	return func(divs []marketdata.Dividend) any {
		if v == v1 {
			return encodeAll(divs, newDividend)
		}
		return encodeAll(divs, func(d marketdata.Dividend) dividendV2JSON {
			return dividendV2JSON{Date: marketdata.FormatDate(d.Date), Dividend: d.Amount, Symbol: d.Symbol}
		})
	}
}

// actionList serves a page of corporate actions (/splits, /dividends),
// read by list and encoded by encode: of the symbols the query names or,
// ofTicker, of the one the path names (/tickers/{symbol}/splits, 404 for
// an unknown ticker).
func actionList[T any](s *Server, ofTicker bool, list func(context.Context, marketdata.ActionQuery) ([]T, int64, error), encode func([]T) any) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, page, err := actionQuery(c, !ofTicker)
		if err != nil {
			s.writeError(c, err)
			return
		}
		if ofTicker {
			t, ok := s.pathTicker(c)
			if !ok {
				return
			}
			q.Symbols = []string{t.Symbol}
		}
		items, total, err := list(c.Request.Context(), q)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendValue(c, envelope[any]{Pagination: pagination.NewEnvelope(page, len(items), total), Data: encode(items)})
	}
}

func newSplit(sp marketdata.Split) splitJSON {
	return splitJSON{Date: marketdata.FormatDate(sp.Date), SplitFactor: sp.Factor, Symbol: sp.Symbol}
}

func newDividend(d marketdata.Dividend) dividendJSON {
	return dividendJSON{Date: marketdata.FormatDate(d.Date), Dividend: d.Amount, Symbol: d.Symbol}
}

// encodeAll is items each encoded by encode: the data of a list answer.
func encodeAll[T, J any](items []T, encode func(T) J) []J {
	data := make([]J, len(items))
	for i, it := range items {
		data[i] = encode(it)
	}
	return data
}

// sendList answers a page of items, each encoded by encode, in
// marketstack's envelope; total counts every match, not just the page.
func sendList[T, J any](s *Server, c *gin.Context, page pagination.Page, items []T, total int64, encode func(T) J) {
	s.sendValue(c, envelope[[]J]{Pagination: pagination.NewEnvelope(page, len(items), total), Data: encodeAll(items, encode)})
}

// sendPage answers the page that read reads (the items and the count of
// every match), each encoded by encode, after the page's parameters and
// any failed before in p.
func sendPage[T, J any](s *Server, c *gin.Context, p *queryParams, read func(context.Context, pagination.Page) ([]T, int64, error), encode func(T) J) {
	page, ok := s.validPage(c, p)
	if !ok {
		return
	}
	items, total, err := read(c.Request.Context(), page)
	if err != nil {
		s.writeError(c, err)
		return
	}
	sendList(s, c, page, items, total, encode)
}

// currencyList serves /currencies, paged.
func (s *Server) currencyList(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		sendPage(s, c, parseQuery(c.Request.URL.RawQuery), pageOf(marketdata.Currencies()), func(cur marketdata.Currency) any {
			if v == v2 {
				return currencyV2JSON{Code: cur.Code, Symbol: cur.Symbol, SymbolNative: cur.SymbolNative, Name: cur.Name}
			}
			return newCurrency(cur)
		})
	}
}

// timezoneList serves /timezones, paged.
func (s *Server) timezoneList(c *gin.Context) {
	sendPage(s, c, parseQuery(c.Request.URL.RawQuery), pageOf(marketdata.Timezones()), newTimezone)
}

// pageOf reads pages of a list held in memory.
func pageOf[T any](all []T) func(context.Context, pagination.Page) ([]T, int64, error) {
	return func(_ context.Context, page pagination.Page) ([]T, int64, error) {
		return pageIn(all, page), int64(len(all)), nil
	}
}

// pageIn is one page of all.
func pageIn[T any](all []T, page pagination.Page) []T {
	if page.Offset >= len(all) {
		return []T{}
	}
	all = all[page.Offset:]
	if page.Limit > 0 && page.Limit < len(all) {
		all = all[:page.Limit]
	}
	return all
}

func (s *Server) sendValue(c *gin.Context, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.writeError(c, fmt.Errorf("encode response: %w", err))
		return
	}
	sendJSON(c, b, cacheMarketData)
}

// healthz is liveness: the process serves HTTP. It checks nothing else, so
// a database outage never gets the process restarted.
func (s *Server) healthz(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz is readiness: the database answers within a second as the
// primary (a demoted node does not count) and the server is not shutting
// down. The cache's and each read replica's state are reported but never
// fail readiness, because requests fall back to the primary.
func (s *Server) readyz(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
	defer cancel()
	db := "ok"
	if err := s.o.Ping(ctx); err != nil {
		db = "unavailable"
	}
	body := gin.H{"status": "ready", "database": db, "cache": s.o.CacheStatus(ctx)}
	if s.o.ReplicaStates != nil {
		body["replicas"] = s.o.ReplicaStates()
	}
	status := http.StatusOK
	switch {
	case s.ShuttingDown():
		body["status"], status = "shutting_down", http.StatusServiceUnavailable
	case db != "ok":
		body["status"], status = "unavailable", http.StatusServiceUnavailable
	}
	c.JSON(status, body)
}

// openAPI serves an OpenAPI document.
func (s *Server) openAPI(doc []byte) gin.HandlerFunc {
	return func(c *gin.Context) { sendJSON(c, doc, cacheStatic) }
}
