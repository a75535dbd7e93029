package httpapi

import (
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/ginauth"
)

// routes lists the whole API surface on e, behind the edge both services
// share (pkg/apiengine). Every /v1 and /v2 data endpoint takes
// the key as marketstack does (access_key query parameter) or, as a
// convenience that keeps keys out of URLs and logs, as "Authorization:
// Bearer <key>"; when both are sent the query parameter wins.
func (s *Server) routes(e *gin.Engine) {
	e.NoRoute(func(c *gin.Context) { s.writeError(c, errUnknownFunction) })
	e.NoMethod(func(c *gin.Context) { s.writeError(c, errMethodNotAllowed) })

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.o.Registry, promhttp.HandlerOpts{})))
	e.GET("/v1/openapi.json", s.openAPI(s.openapi))
	e.GET("/v2/openapi.json", s.openAPI(s.openapiV2))
	// The interactive reference of both documents (pkg/apidocs): no key,
	// and outside the rate-limited groups below.
	e.GET("/docs", s.docs.Page)
	e.GET("/docs/*asset", s.docs.Asset)

	// CORS goes on the API's routes only: a browser app has no business
	// reading the metrics, the probes or the documents from another origin.
	keyed := ginauth.Middleware(s.o.Auth, auth.FirstOf(auth.QueryParam("access_key"), auth.BearerHeader()), s.writeError)
	api := []gin.HandlerFunc{keyed}
	if s.cors != nil {
		api = []gin.HandlerFunc{s.cors.handle, keyed}
	}
	operational := map[string]bool{}
	for _, r := range e.Routes() {
		operational[r.Path] = true
	}
	s.versionRoutes(e.Group("/v1", api...), v1)
	s.versionRoutes(e.Group("/v2", api...), v2)
	if s.cors == nil {
		return
	}
	// A preflight carries no key and matches no GET route: the policy
	// answers it on each API path, and any other OPTIONS is the 405 it is
	// without a policy.
	for _, r := range e.Routes() {
		if !operational[r.Path] {
			e.OPTIONS(r.Path, s.cors.handle, func(c *gin.Context) { s.writeError(c, errMethodNotAllowed) })
		}
	}
}

// versionRoutes lists the functions of one API version; handlers given the
// version answer in its shapes, the others alike in both.
func (s *Server) versionRoutes(g *gin.RouterGroup, v apiVersion) {
	eod := g.Group("", s.requireScope("eod"), s.rateLimit)
	eod.GET("/eod", s.eodList(false))
	eod.GET("/eod/latest", s.eodList(true))
	eod.GET("/eod/:date", s.eodOnDate)
	eod.GET("/tickers/:symbol/eod", s.tickerEOD(v))
	eod.GET("/tickers/:symbol/eod/latest", s.tickerEODLatest)
	eod.GET("/tickers/:symbol/eod/:date", s.tickerEODOnDate)
	eod.GET("/exchanges/:mic/eod", s.exchangeEOD(v, false, false))
	eod.GET("/exchanges/:mic/eod/latest", s.exchangeEOD(v, true, false))
	eod.GET("/exchanges/:mic/eod/:date", s.exchangeEOD(v, false, true))
	if v == v2 {
		// Computed from the indices' EOD bars.
		eod.GET("/indexlist", s.indexList)
		eod.GET("/indexinfo", s.indexInfo)
		// The latest intraday minute for a key with that scope, else the
		// latest EOD close.
		eod.GET("/stockprice", s.stockPrice)
		// v2's functions over datasets of their own: each answers 403
		// function_access_restricted until its dataset is imported.
		commodities := s.needDataset(marketdata.DatasetCommodities, "commodity prices")
		eod.GET("/commodities", commodities, s.commodities)
		eod.GET("/commoditieshistory", commodities, s.commoditiesHistory)
		eod.GET("/companyratings", s.needDataset(marketdata.DatasetRatings, "company ratings"), s.companyRatings)
		bonds := s.needDataset(marketdata.DatasetBonds, "government bonds")
		eod.GET("/bondlist", bonds, s.bondList)
		eod.GET("/bond", bonds, s.bond)
		etfs := s.needDataset(marketdata.DatasetETFs, "ETF holdings")
		eod.GET("/etflist", etfs, s.etfList)
		eod.GET("/etfholdings", etfs, s.etfHoldings)
		edgar := s.needDataset(marketdata.DatasetEDGAR, "SEC EDGAR filings")
		eod.GET("/cik_code", edgar, s.cikCode)
		eod.GET("/company_name", edgar, s.companyName)
		eod.GET("/submissions", edgar, s.submissions)
		eod.GET("/company_facts", edgar, s.companyFactsAll)
		eod.GET("/concept/:concept", edgar, s.concept)
		eod.GET("/frames/:concept/:unit", edgar, s.frame)
	}

	tickers := g.Group("", s.requireScope("tickers"), s.rateLimit)
	if v == v2 {
		tickers.GET("/tickerslist", s.tickerList(v))
	} else {
		tickers.GET("/tickers", s.tickerList(v))
	}
	tickers.GET("/tickers/:symbol", s.tickerOne(v))
	if v == v2 {
		tickers.GET("/tickerinfo", s.tickerInfo)
	}

	// Reference lists (currencies, time zones) go with exchanges, whose
	// objects embed them.
	exchanges := g.Group("", s.requireScope("exchanges"), s.rateLimit)
	exchanges.GET("/exchanges", s.exchangeList(v))
	exchanges.GET("/exchanges/:mic", s.exchangeOne(v))
	exchanges.GET("/exchanges/:mic/tickers", s.exchangeTickers(v))
	exchanges.GET("/currencies", s.currencyList(v))
	exchanges.GET("/timezones", s.timezoneList)

	splits := g.Group("", s.requireScope("splits"), s.rateLimit)
	splits.GET("/splits", actionList(s, false, s.splits, encodeSplits(v)))
	splits.GET("/tickers/:symbol/splits", actionList(s, true, s.splits, encodeSplits(v)))

	dividends := g.Group("", s.requireScope("dividends"), s.rateLimit)
	dividends.GET("/dividends", actionList(s, false, s.dividends, encodeDividends(v)))
	dividends.GET("/tickers/:symbol/dividends", actionList(s, true, s.dividends, encodeDividends(v)))

	// Intraday needs its own scope; a key without it gets marketstack's
	// 403 for a plan without intraday, never a 404.
	intraday := g.Group("", s.requireIntradayScope, s.rateLimit)
	intraday.GET("/intraday", s.intradayList(v, intradayRange))
	intraday.GET("/intraday/latest", s.intradayList(v, intradayLatest))
	intraday.GET("/intraday/:date", s.intradayList(v, intradayOnDate))
	intraday.GET("/tickers/:symbol/intraday", s.tickerIntraday(v, intradayRange))
	intraday.GET("/tickers/:symbol/intraday/latest", s.tickerIntradayLatest(v))
	intraday.GET("/tickers/:symbol/intraday/:date", s.tickerIntraday(v, intradayOnDate))
	intraday.GET("/exchanges/:mic/intraday", s.exchangeIntraday(v, intradayRange))
	intraday.GET("/exchanges/:mic/intraday/latest", s.exchangeIntraday(v, intradayLatest))
	intraday.GET("/exchanges/:mic/intraday/:date", s.exchangeIntraday(v, intradayOnDate))
}
