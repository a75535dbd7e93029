package httpapi_test

import (
	"net/http"
	"sort"
	"testing"
)

// v2Call is a valid request on the demo data for one operation of the v2
// document, with the status it must answer.
type v2Call struct {
	path   string
	query  []string
	status int
}

// v2Calls holds one call per operation of openapi_v2.yaml, by its path
// template: TestV2DocumentEndToEnd fails on an operation without one, so
// a function added to the document gets its call here.
var v2Calls = map[string]v2Call{
	"/v2/eod":                              {"/v2/eod", []string{"symbols", "GOOG,GSPC.INDX", "limit", "4"}, 200},
	"/v2/eod/latest":                       {"/v2/eod/latest", []string{"symbols", "GOOG"}, 200},
	"/v2/eod/{date}":                       {"/v2/eod/2008-10-14", []string{"symbols", "GOOG"}, 200},
	"/v2/tickerslist":                      {"/v2/tickerslist", nil, 200},
	"/v2/tickers/{symbol}":                 {"/v2/tickers/GOOG", nil, 200},
	"/v2/tickers/{symbol}/eod":             {"/v2/tickers/GOOG/eod", []string{"limit", "2"}, 200},
	"/v2/tickers/{symbol}/eod/latest":      {"/v2/tickers/GOOG/eod/latest", nil, 200},
	"/v2/tickers/{symbol}/eod/{date}":      {"/v2/tickers/GOOG/eod/2008-10-14", nil, 200},
	"/v2/exchanges":                        {"/v2/exchanges", nil, 200},
	"/v2/exchanges/{mic}":                  {"/v2/exchanges/XNAS", nil, 200},
	"/v2/exchanges/{mic}/tickers":          {"/v2/exchanges/XNAS/tickers", nil, 200},
	"/v2/splits":                           {"/v2/splits", []string{"symbols", "GOOG"}, 200},
	"/v2/dividends":                        {"/v2/dividends", []string{"symbols", "MSFT"}, 200},
	"/v2/tickers/{symbol}/splits":          {"/v2/tickers/GOOG/splits", nil, 200},
	"/v2/tickers/{symbol}/dividends":       {"/v2/tickers/MSFT/dividends", nil, 200},
	"/v2/exchanges/{mic}/eod":              {"/v2/exchanges/XNAS/eod", []string{"symbols", "GOOG", "limit", "2"}, 200},
	"/v2/exchanges/{mic}/eod/latest":       {"/v2/exchanges/XNAS/eod/latest", []string{"symbols", "GOOG"}, 200},
	"/v2/exchanges/{mic}/eod/{date}":       {"/v2/exchanges/XNAS/eod/2008-10-14", []string{"symbols", "GOOG"}, 200},
	"/v2/currencies":                       {"/v2/currencies", nil, 200},
	"/v2/timezones":                        {"/v2/timezones", nil, 200},
	"/v2/intraday":                         {"/v2/intraday", []string{"symbols", "GOOG"}, 200},
	"/v2/intraday/latest":                  {"/v2/intraday/latest", []string{"symbols", "GOOG"}, 200},
	"/v2/intraday/{date}":                  {"/v2/intraday/2008-10-14", []string{"symbols", "GOOG"}, 200},
	"/v2/tickers/{symbol}/intraday":        {"/v2/tickers/GOOG/intraday", nil, 200},
	"/v2/tickers/{symbol}/intraday/latest": {"/v2/tickers/GOOG/intraday/latest", nil, 200},
	"/v2/tickers/{symbol}/intraday/{date}": {"/v2/tickers/GOOG/intraday/2008-10-14", nil, 200},
	"/v2/exchanges/{mic}/intraday":         {"/v2/exchanges/XNAS/intraday", []string{"symbols", "GOOG"}, 200},
	"/v2/exchanges/{mic}/intraday/latest":  {"/v2/exchanges/XNAS/intraday/latest", []string{"symbols", "GOOG"}, 200},
	"/v2/exchanges/{mic}/intraday/{date}":  {"/v2/exchanges/XNAS/intraday/2008-10-14", []string{"symbols", "GOOG"}, 200},
	"/v2/indexlist":                        {"/v2/indexlist", nil, 200},
	"/v2/indexinfo":                        {"/v2/indexinfo", []string{"index", "GSPC.INDX"}, 200},
	"/v2/tickerinfo":                       {"/v2/tickerinfo", []string{"ticker", "GOOG"}, 200},
	"/v2/stockprice":                       {"/v2/stockprice", []string{"ticker", "GOOG"}, 200},
	"/v2/commodities":                      {"/v2/commodities", []string{"commodity_name", "gold"}, 200},
	"/v2/commoditieshistory":               {"/v2/commoditieshistory", []string{"commodity_name", "gold", "frequency", "monthly"}, 200},
	"/v2/companyratings":                   {"/v2/companyratings", []string{"ticker", "GOOG"}, 200},
	"/v2/bondlist":                         {"/v2/bondlist", nil, 200},
	"/v2/bond":                             {"/v2/bond", []string{"country", "germany"}, 200},
	"/v2/etflist":                          {"/v2/etflist", []string{"list", "ticker"}, 200},
	"/v2/etfholdings":                      {"/v2/etfholdings", []string{"ticker", "SMPL"}, 200},
	"/v2/cik_code":                         {"/v2/cik_code", []string{"company_name", "example"}, 200},
	"/v2/company_name":                     {"/v2/company_name", []string{"cik_code", "0000000042"}, 200},
	"/v2/submissions":                      {"/v2/submissions", []string{"cik_code", "0000000042"}, 200},
	"/v2/company_facts":                    {"/v2/company_facts", []string{"cik_code", "0000000042"}, 200},
	"/v2/concept/{concept}":                {"/v2/concept/accounts_payable", []string{"cik_code", "0000000042"}, 200},
	"/v2/frames/{concept}/{unit}":          {"/v2/frames/accounts_payable/USD", []string{"frame", "CY2024Q4I"}, 200},
	"/v2/openapi.json":                     {"/v2/openapi.json", nil, 200},
	"/healthz":                             {"/healthz", nil, 200},
	"/readyz":                              {"/readyz", nil, 200},
	"/metrics":                             {"/metrics", nil, 200},
}

// TestV2DocumentEndToEnd calls every operation of the served v2 document
// on the demo data (real PostgreSQL and Redis) and holds each answer to the
// document: the status the call names, and a body of the operation's
// schema for that status (e.get validates).
func TestV2DocumentEndToEnd(t *testing.T) {
	e := demoE2E(t)
	ops := e.doc.v2.doc.Paths.InMatchingOrder()
	sort.Strings(ops)
	for _, tmpl := range ops {
		if e.doc.v2.doc.Paths.Value(tmpl).Get == nil {
			continue
		}
		t.Run(tmpl, func(t *testing.T) {
			c, ok := v2Calls[tmpl]
			if !ok {
				t.Fatalf("no call for %s in v2Calls", tmpl)
			}
			rec := e.get(t, c.path, vals(c.query...))
			if rec.Code != c.status {
				t.Fatalf("%s: %d, want %d: %s", c.path, rec.Code, c.status, rec.Body)
			}
			if c.status == http.StatusForbidden {
				if got := decode[apiErr](t, rec).Error.Code; got != "function_access_restricted" {
					t.Errorf("code %s, want function_access_restricted", got)
				}
			}
		})
	}
	if n := len(v2Calls); n != len(ops) {
		t.Errorf("%d calls for %d operations: a call names an operation the document lacks", n, len(ops))
	}
}
