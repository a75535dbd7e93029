package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// errIntradayUnavailable reports a server whose store serves no intraday
// bars; it is an internal error, the wiring's fault.
var errIntradayUnavailable = errors.New("intraday: store serves no intraday bars")

// intradayRoute names the three forms of an intraday route.
type intradayRoute int

const (
	intradayRange  intradayRoute = iota // /intraday
	intradayLatest                      // /intraday/latest
	intradayOnDate                      // /intraday/{date}
)

// intradayParams reads the parameters every intraday route shares:
// interval, after_hours, sort, limit, offset, and the range (date_from and
// date_to, or the {date} of the path).
func intradayParams(p *queryParams, route intradayRoute, pathDateRaw string) (marketdata.IntradayQuery, pagination.Page) {
	q := marketdata.IntradayQuery{Interval: marketdata.DefaultInterval, Sort: p.sort(), Latest: route == intradayLatest}
	if raw, ok := p.single("interval"); ok && raw != "" {
		iv, err := marketdata.ParseInterval(raw)
		if err != nil {
			p.fail("interval", "invalid_interval", err.Error())
		}
		q.Interval = iv
	}
	if raw, ok := p.single("after_hours"); ok && raw != "" {
		switch strings.ToLower(raw) {
		case "true", "1":
			q.AfterHours = true
		case "false", "0":
		default:
			p.fail("after_hours", "invalid_after_hours", "must be true or false")
		}
	}
	if route == intradayOnDate {
		q.FromDay = pathDate(p, pathDateRaw)
		q.ToDay = q.FromDay
	} else {
		q.From, q.FromDay = p.instant("date_from")
		q.To, q.ToDay = p.instant("date_to")
		if lo, hi := firstOf(q.From, q.FromDay), firstOf(q.To, q.ToDay); !lo.IsZero() && !hi.IsZero() {
			// A day bound covers its whole day.
			if !q.ToDay.IsZero() {
				hi = hi.Add(24*time.Hour - time.Nanosecond)
			}
			if lo.After(hi) {
				p.fail("date_from", "invalid_date_range", "must not be after date_to")
			}
			// The store reads every minute of the range (the total counts
			// its buckets), so the range bounds the work; an open range is
			// cut to the span instead (marketdata.IntradayQuery).
			if span := marketdata.MaxSpan(q.Interval); hi.Sub(lo) >= span && !p.failed("interval") {
				p.fail("date_from", "invalid_date_range", fmt.Sprintf("the range may span at most %d days with interval %s",
					span/(24*time.Hour), intervalName(q.Interval)))
			}
		}
	}
	page := p.page()
	q.Limit, q.Offset = page.Limit, page.Offset
	return q, page
}

// intervalName is the name of an interval of marketdata.Intervals.
func intervalName(minutes int) string {
	for _, iv := range marketdata.Intervals {
		if iv.Minutes == minutes {
			return iv.Name
		}
	}
	return strconv.Itoa(minutes) + "min"
}

func firstOf(a, b time.Time) time.Time {
	if !a.IsZero() {
		return a
	}
	return b
}

// instant reads date_from or date_to of an intraday route: a timestamp is
// an instant, a date a calendar day of the exchange.
func (p *queryParams) instant(name string) (instant, day time.Time) {
	raw, ok := p.single(name)
	if !ok || raw == "" {
		return time.Time{}, time.Time{}
	}
	instant, day, err := marketdata.ParseInstant(raw)
	if err != nil {
		p.fail(name, "invalid_date", err.Error())
	}
	return instant, day
}

func (s *Server) intradayStore() (marketdata.IntradayStore, error) {
	if is, ok := s.o.Store.(marketdata.IntradayStore); ok {
		return is, nil
	}
	return nil, errIntradayUnavailable
}

// intradayList serves /intraday, /intraday/latest and /intraday/{date}.
func (s *Server) intradayList(v apiVersion, route intradayRoute) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q, _ := intradayParams(p, route, c.Param("date"))
		q.Symbols = p.symbols("symbols", true)
		q.Exchange = p.exchange()
		if err := p.err(); err != nil {
			s.writeError(c, err)
			return
		}
		page, err := s.readIntraday(c, q)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendIntradayPage(c, q, page, v)
	}
}

// sendIntradayPage answers a page of bars as a flat data array.
func (s *Server) sendIntradayPage(c *gin.Context, q marketdata.IntradayQuery, page marketdata.IntradayPage, v apiVersion) {
	b := appendPagination(make([]byte, 0, 256+len(page.Bars)*200), q.Limit, q.Offset, len(page.Bars), page.Total)
	b = appendIntradayRecords(b, page.Bars, v)
	sendJSON(c, append(b, '}'), cacheMarketData)
}

func (s *Server) readIntraday(c *gin.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	is, err := s.intradayStore()
	if err != nil {
		return marketdata.IntradayPage{}, err
	}
	return is.Intraday(c.Request.Context(), q)
}

// tickerIntraday serves /tickers/{symbol}/intraday and
// /tickers/{symbol}/intraday/{date}: the ticker object with a page of its
// bars under "intraday", as /tickers/{symbol}/eod wraps "eod".
func (s *Server) tickerIntraday(v apiVersion, route intradayRoute) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, t, ok := s.tickerIntradayQuery(c, route)
		if !ok {
			return
		}
		page, err := s.readIntraday(c, q)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.sendWrappedIntraday(c, q, page, tickerHeadOf(t, v), v)
	}
}

// tickerIntradayLatest serves /tickers/{symbol}/intraday/latest: the
// symbol's most recent bar as one record, 404 when it has none.
func (s *Server) tickerIntradayLatest(v apiVersion) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, _, ok := s.tickerIntradayQuery(c, intradayLatest)
		if !ok {
			return
		}
		q.Limit, q.Offset = 1, 0
		page, err := s.readIntraday(c, q)
		if err == nil && len(page.Bars) == 0 {
			err = marketdata.ErrNotFound
		}
		if err != nil {
			s.writeError(c, err)
			return
		}
		sendJSON(c, appendIntradayRecord(nil, page.Bars[0], v), cacheMarketData)
	}
}

// tickerIntradayQuery reads the intraday query of a /tickers/{symbol}
// route: its parameters, then the path's ticker, whose symbol it selects.
// It answers the error itself and reports false when either fails.
func (s *Server) tickerIntradayQuery(c *gin.Context, route intradayRoute) (marketdata.IntradayQuery, marketdata.Ticker, bool) {
	p := parseQuery(c.Request.URL.RawQuery)
	q, _ := intradayParams(p, route, c.Param("date"))
	t, ok := afterQuery(s, c, p, s.pathTicker)
	if !ok {
		return q, t, false
	}
	q.Symbols = []string{t.Symbol}
	return q, t, true
}

// exchangeIntraday serves /exchanges/{mic}/intraday, /latest and /{date}:
// /intraday restricted to the exchange, inside its object in v1 and flat,
// as /intraday answers, in v2 (marketstack's IntradayResponse).
func (s *Server) exchangeIntraday(v apiVersion, route intradayRoute) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := parseQuery(c.Request.URL.RawQuery)
		q, _ := intradayParams(p, route, c.Param("date"))
		q.Symbols = p.symbols("symbols", true)
		x, ok := afterQuery(s, c, p, s.pathExchange)
		if !ok {
			return
		}
		q.Exchange = x.MIC
		page, err := s.readIntraday(c, q)
		if err != nil {
			s.writeError(c, err)
			return
		}
		if v == v2 {
			s.sendIntradayPage(c, q, page, v)
			return
		}
		s.sendWrappedIntraday(c, q, page, exchangeOf(x, v), v)
	}
}

// sendWrappedIntraday answers a page of bars inside head, an object, under
// "intraday".
func (s *Server) sendWrappedIntraday(c *gin.Context, q marketdata.IntradayQuery, page marketdata.IntradayPage, head any, v apiVersion) {
	obj, err := json.Marshal(head)
	if err != nil {
		s.writeError(c, fmt.Errorf("encode intraday head: %w", err))
		return
	}
	b := appendPagination(make([]byte, 0, len(obj)+256+len(page.Bars)*200), q.Limit, q.Offset, len(page.Bars), page.Total)
	b = append(b, obj[:len(obj)-1]...)
	b = append(b, `,"intraday":`...)
	b = appendIntradayRecords(b, page.Bars, v)
	sendJSON(c, append(b, "}}"...), cacheMarketData)
}

func appendIntradayRecords(b []byte, bars []marketdata.IntradayBar, v apiVersion) []byte {
	b = append(b, '[')
	for i, bar := range bars {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendIntradayRecord(b, bar, v)
	}
	return append(b, ']')
}

// appendIntradayRecord writes one bar in marketstack's field order. v1:
// open, high, low, last, close, volume, date, symbol, exchange. v2 adds
// the quote fields of its IEX feed, which minute bars do not hold (null),
// and marketstack_last, the bar's last trade here, and the fields of its
// EOD bar (IntradayBar is EODBar in v2's document).
func appendIntradayRecord(b []byte, bar marketdata.IntradayBar, v apiVersion) []byte {
	b = eodjson.AppendNumberField(b, `{"open":`, bar.Open)
	b = eodjson.AppendNumberField(b, `,"high":`, bar.High)
	b = eodjson.AppendNumberField(b, `,"low":`, bar.Low)
	if v == v2 {
		b = append(b, `,"mid":null,"last_size":null,"bid_size":null,"bid_price":null,"ask_price":null,"ask_size":null`...)
	}
	b = eodjson.AppendNumberField(b, `,"last":`, bar.Close)
	b = eodjson.AppendNumberField(b, `,"close":`, bar.Close)
	b = eodjson.AppendNumberField(b, `,"volume":`, bar.Volume)
	if v == v2 {
		b = eodjson.AppendNumberField(b, `,"marketstack_last":`, bar.Close)
		// v2's IntradayBar is its EOD bar: a minute bar is not adjusted
		// and carries no split or dividend, so those are null.
		b = append(b, `,"adj_high":null,"adj_low":null,"adj_close":null,"adj_open":null,"adj_volume":null,"split_factor":null,"dividend":null`...)
		b = eodjson.AppendStringField(b, `,"name":`, bar.Name)
		b = eodjson.AppendStringField(b, `,"exchange_code":`, bar.ExchangeCode)
		b = eodjson.AppendStringField(b, `,"asset_type":`, bar.AssetType)
		b = eodjson.AppendStringField(b, `,"price_currency":`, bar.PriceCurrency)
	}
	b = append(b, `,"date":"`...)
	b = bar.Date.UTC().AppendFormat(b, "2006-01-02T15:04:05-0700")
	b = eodjson.AppendStringField(b, `","symbol":`, bar.Symbol)
	b = eodjson.AppendStringField(b, `,"exchange":`, bar.Exchange)
	return append(b, '}')
}

// requireIntradayScope refuses a key without the intraday scope with
// marketstack's answer to a plan without intraday.
func (s *Server) requireIntradayScope(c *gin.Context) {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	if !p.HasScope("intraday") {
		s.writeError(c, errIntradayRestricted)
		return
	}
	c.Next()
}
