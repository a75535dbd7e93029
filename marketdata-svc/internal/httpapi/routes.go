package httpapi

import (
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// routes lists the whole API surface. Every /v1 data endpoint takes the key
// as marketstack does (access_key query parameter) or, as a convenience that
// keeps keys out of URLs and logs, as "Authorization: Bearer <key>"; when
// both are sent the query parameter wins.
func (s *Server) routes() {
	e := s.engine
	e.Use(s.requestContext, drainBody, s.recovery)
	e.NoRoute(func(c *gin.Context) { s.writeError(c, errUnknownFunction) })
	e.NoMethod(func(c *gin.Context) { s.writeError(c, errMethodNotAllowed) })

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})))
	e.GET("/v1/openapi.json", s.openAPI)

	v1 := e.Group("/v1", s.auth.Middleware(auth.FirstOf(auth.QueryParam("access_key"), auth.BearerHeader()), s.authErr))
	eod := v1.Group("", s.requireScope("eod"), s.rateLimit)
	eod.GET("/eod", s.eodList(false))
	eod.GET("/eod/latest", s.eodList(true))
	eod.GET("/eod/:date", s.eodOnDate)
	eod.GET("/tickers/:symbol/eod", s.tickerEOD)
	eod.GET("/tickers/:symbol/eod/latest", s.tickerEODLatest)
	eod.GET("/tickers/:symbol/eod/:date", s.tickerEODOnDate)

	tickers := v1.Group("", s.requireScope("tickers"), s.rateLimit)
	tickers.GET("/tickers", s.tickerList)
	tickers.GET("/tickers/:symbol", s.tickerOne)

	exchanges := v1.Group("", s.requireScope("exchanges"), s.rateLimit)
	exchanges.GET("/exchanges", s.exchangeList)
	exchanges.GET("/exchanges/:mic", s.exchangeOne)
	exchanges.GET("/exchanges/:mic/tickers", s.exchangeTickers)

	v1.GET("/splits", s.requireScope("splits"), s.rateLimit, s.splitList)
	v1.GET("/dividends", s.requireScope("dividends"), s.rateLimit, s.dividendList)
}
