package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
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
	// The functions over datasets not loaded: marketstack's answer for a
	// plan without them.
	"/v2/commodities":             {"/v2/commodities", []string{"commodity_name", "gold"}, 403},
	"/v2/commoditieshistory":      {"/v2/commoditieshistory", []string{"commodity_name", "gold"}, 403},
	"/v2/companyratings":          {"/v2/companyratings", []string{"ticker", "GOOG"}, 403},
	"/v2/bondlist":                {"/v2/bondlist", nil, 403},
	"/v2/bond":                    {"/v2/bond", []string{"country", "germany"}, 403},
	"/v2/etflist":                 {"/v2/etflist", nil, 403},
	"/v2/etfholdings":             {"/v2/etfholdings", []string{"ticker", "SPY"}, 403},
	"/v2/cik_code":                {"/v2/cik_code", []string{"cik_code", "1652044"}, 403},
	"/v2/company_name":            {"/v2/company_name", []string{"cik_code", "1652044"}, 403},
	"/v2/submissions":             {"/v2/submissions", []string{"cik_code", "1652044"}, 403},
	"/v2/company_facts":           {"/v2/company_facts", []string{"cik_code", "1652044"}, 403},
	"/v2/concept/{concept}":       {"/v2/concept/accounts_payable", []string{"cik_code", "1652044"}, 403},
	"/v2/frames/{concept}/{unit}": {"/v2/frames/accounts_payable/USD", []string{"frame", "CY2019Q1I"}, 403},
	"/v2/openapi.json":            {"/v2/openapi.json", nil, 200},
	"/healthz":                    {"/healthz", nil, 200},
	"/readyz":                     {"/readyz", nil, 200},
	"/metrics":                    {"/metrics", nil, 200},
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

// unavailableDatasets are the published functions whose dataset this
// service does not load.
var unavailableDatasets = []string{"/commodities", "/commoditieshistory", "/companyratings", "/bondlist", "/bond", "/etflist", "/etfholdings",
	"/cik_code", "/company_name", "/submissions", "/company_facts", "/concept/accounts_payable", "/frames/accounts_payable/{unit}"}

// publishedMatchingFloor is how many published operations answered 200
// with the published types when this test was written: fewer is a
// regression.
const publishedMatchingFloor = 25

// TestPublishedV2Contract holds the service to marketstack's published v2
// document, read from the file MARKETSTACK_V2_OPENAPI names (it is
// marketstack's, so it is not kept in this repository): every published
// operation is in the served document; called on the demo data, each
// answers 200 with a body of the published response schema (every
// property nullable, as marketstack itself sends nulls), or, for a
// dataset not loaded, 403 function_access_restricted naming it.
func TestPublishedV2Contract(t *testing.T) {
	path := os.Getenv("MARKETSTACK_V2_OPENAPI")
	if path == "" {
		t.Skip("MARKETSTACK_V2_OPENAPI is unset: set it to marketstack's published v2 OpenAPI document (repository api-evangelist/marketstack, openapi/marketstack-v2-openapi.json) to run this test")
	}
	published, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	nullable := map[*openapi3.Schema]bool{}
	for _, s := range published.Components.Schemas {
		allNullable(s, nullable)
	}
	e := demoE2E(t)
	type result struct{ op, why string }
	var matching, restricted []string
	var other []result
	tmpls := published.Paths.InMatchingOrder()
	sort.Strings(tmpls)
	for _, tmpl := range tmpls {
		item := published.Paths.Value(tmpl)
		if item.Get == nil {
			continue
		}
		op := "GET " + tmpl
		concrete := strings.NewReplacer("{symbol}", "GOOG", "{mic}", "XNAS", "{date}", "2008-10-14", "{unit}", "USD").Replace(tmpl)
		route, _, err := e.doc.v2.router.FindRoute(newGet("http://localhost:8081/v2" + concrete))
		if err != nil {
			t.Errorf("%s: not in the served v2 document: %v", op, err)
			continue
		}
		c, ok := v2Calls[route.Path]
		if !ok {
			t.Errorf("%s: served as %s, with no call in v2Calls", op, route.Path)
			continue
		}
		rec := e.get(t, c.path, vals(c.query...))
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			other = append(other, result{op, fmt.Sprintf("%d, not JSON", rec.Code)})
			continue
		}
		if slices.Contains(unavailableDatasets, tmpl) {
			msg, _ := body.(map[string]any)["error"].(map[string]any)
			if rec.Code != http.StatusForbidden || msg["code"] != "function_access_restricted" || !strings.Contains(fmt.Sprint(msg["message"]), "dataset") {
				t.Errorf("%s: %d %s, want 403 function_access_restricted naming the dataset", op, rec.Code, rec.Body)
				continue
			}
			restricted = append(restricted, op)
			continue
		}
		if rec.Code != http.StatusOK {
			other = append(other, result{op, fmt.Sprintf("status %d: %s", rec.Code, rec.Body)})
			continue
		}
		resp := item.Get.Responses.Status(http.StatusOK)
		if resp == nil || resp.Value.Content.Get("application/json") == nil {
			other = append(other, result{op, "the published document gives no 200 JSON schema"})
			continue
		}
		schema := resp.Value.Content.Get("application/json").Schema
		allNullable(schema, nullable)
		if err := schema.Value.VisitJSON(body, openapi3.MultiErrors()); err != nil {
			other = append(other, result{op, firstLine(err.Error())})
			continue
		}
		// The published schemas require nothing, so an answer missing a
		// field, or a whole object, would pass the types: marketstack
		// sends every field it documents (null when it has no value).
		if missing := missingFields("$", body, schema.Value, nil); len(missing) > 0 {
			other = append(other, result{op, "missing " + strings.Join(missing[:min(len(missing), 4)], ", ")})
			continue
		}
		matching = append(matching, op)
	}
	total := len(matching) + len(restricted) + len(other)
	t.Logf("%d of %d published operations answer 200 with matching types", len(matching), total)
	t.Logf("answer 403 function_access_restricted: %d", len(restricted))
	for _, r := range other {
		t.Logf("does not match: %s: %s", r.op, r.why)
	}
	if len(matching) < publishedMatchingFloor {
		t.Errorf("%d operations match the published types, fewer than the %d that did", len(matching), publishedMatchingFloor)
	}
	if len(restricted) != len(unavailableDatasets) {
		t.Errorf("%d operations answer 403 function_access_restricted, want %d", len(restricted), len(unavailableDatasets))
	}
}

// allNullable makes s and every schema under it accept null.
func allNullable(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	s.Nullable = true
	for _, p := range s.Properties {
		allNullable(p, seen)
	}
	allNullable(s.Items, seen)
	allNullable(s.AdditionalProperties.Schema, seen)
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range group {
			allNullable(r, seen)
		}
	}
}

// missingFields lists the properties schema documents that v lacks, at
// every depth, following arrays and allOf.
func missingFields(path string, v any, schema *openapi3.Schema, out []string) []string {
	if schema == nil || v == nil {
		return out
	}
	for _, sub := range schema.AllOf {
		out = missingFields(path, v, sub.Value, out)
	}
	switch x := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(schema.Properties))
		for name := range schema.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fv, ok := x[name]
			if !ok {
				out = append(out, path+"."+name)
				continue
			}
			out = missingFields(path+"."+name, fv, schema.Properties[name].Value, out)
		}
	case []any:
		if schema.Items != nil && len(x) > 0 {
			out = missingFields(path+"[0]", x[0], schema.Items.Value, out)
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
