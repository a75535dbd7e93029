package httpapi_test

import (
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"
)

// demoCSV reads a bundled demo sample: its rows after the header.
func demoCSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open("../demo/data/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

// TestDatasetFunctionsRestrictedWithoutData holds every v2 dataset function
// to marketstack's answer for a plan without it while its dataset is not
// loaded: 403 function_access_restricted, naming what to import.
func TestDatasetFunctionsRestrictedWithoutData(t *testing.T) {
	e := newE2E(t)
	for _, c := range []struct{ path, kind string }{
		{"/v2/commodities?commodity_name=gold", "commodities"},
		{"/v2/commoditieshistory?commodity_name=gold", "commodities"},
		{"/v2/companyratings?ticker=GOOG", "ratings"},
		{"/v2/bondlist", "bonds"},
		{"/v2/bond?country=germany", "bonds"},
		{"/v2/etflist", "etfs"},
		{"/v2/etfholdings?ticker=SMPL", "etfs"},
		{"/v2/cik_code?company_name=example", "edgar"},
		{"/v2/company_name?cik_code=0000000042", "edgar"},
		{"/v2/submissions?cik_code=0000000042", "edgar"},
		{"/v2/company_facts?cik_code=0000000042", "edgar"},
		{"/v2/concept/accounts_payable?cik_code=0000000042", "edgar"},
		{"/v2/frames/accounts_payable/USD?frame=CY2024Q4I", "edgar"},
	} {
		code, body := getJSON(t, e, c.path)
		msg, _ := field(t, body, "error", "message").(string)
		if code != 403 || field(t, body, "error", "code") != "function_access_restricted" || !strings.Contains(msg, "import --kind "+c.kind) {
			t.Errorf("%s: %d %v, want 403 function_access_restricted naming import --kind %s", c.path, code, body, c.kind)
		}
	}
}

// TestCommoditiesEndToEnd holds /v2/commodities and /v2/commoditieshistory
// to the demo's commodity sample.
func TestCommoditiesEndToEnd(t *testing.T) {
	e := demoE2E(t)
	var gold [][]string
	for _, r := range demoCSV(t, "commodities-synthetic.csv") {
		if r[0] == "gold" {
			gold = append(gold, r)
		}
	}
	last, prev := gold[len(gold)-1], gold[len(gold)-2]
	code, body := getJSON(t, e, "/v2/commodities?commodity_name=GOLD")
	if code != 200 {
		t.Fatalf("commodities: %d %v", code, body)
	}
	lastP, _ := strconv.ParseFloat(last[3], 64)
	prevP, _ := strconv.ParseFloat(prev[3], 64)
	want := map[string]any{
		"commodity_name": "gold", "commodity_unit": last[1], "commodity_price": strconv.FormatFloat(lastP, 'f', -1, 64),
		"price_change_day": strconv.FormatFloat(lastP-prevP, 'f', 2, 64),
		"percentage_day":   strconv.FormatFloat((lastP-prevP)/prevP*100, 'f', 2, 64) + "%",
		"datetime":         last[2] + "T00:00:00+00:00",
		// The sample ends on 2025-12-31: its last price is the fourth
		// quarter's.
		"quarter4_25": strconv.FormatFloat(lastP, 'f', -1, 64),
	}
	for k, v := range want {
		if got := field(t, body, "data", "0", k); got != v {
			t.Errorf("commodities %s = %v, want %v", k, got, v)
		}
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/v2/commodities?commodity_name=unobtainium", 404},
		{"/v2/commodities", 422},
		{"/v2/commodities?commodity_name=" + strings.Repeat("x", 65), 422},
		{"/v2/commoditieshistory?commodity_name=gold&frequency=hourly", 422},
		{"/v2/commoditieshistory?commodity_name=gold&date_from=2025-02-01&date_to=2025-01-01", 422},
	} {
		if code, body := getJSON(t, e, c.path); code != c.code {
			t.Errorf("%s: %d %v, want %d", c.path, code, body, c.code)
		}
	}

	type history struct {
		Result struct {
			Basics struct{ Frequency string }
			Data   []struct {
				Name   string `json:"commodity_name"`
				Prices []struct {
					Price string `json:"commodity_price"`
					Date  string
				} `json:"commodity_prices"`
			}
		}
	}
	h := decode[history](t, e.get(t, "/v2/commoditieshistory", vals("commodity_name", "gold", "frequency", "monthly", "date_from", "2025-01-01")))
	if h.Result.Basics.Frequency != "1month" || len(h.Result.Data) != 1 {
		t.Fatalf("history: %+v", h)
	}
	ps := h.Result.Data[0].Prices
	// Twelve months of 2025, newest first, each its month's last price.
	if len(ps) != 12 || ps[0].Date != "2025-12" || ps[11].Date != "2025-01" || ps[0].Price != want["commodity_price"] {
		t.Errorf("monthly 2025: %+v", ps)
	}
	d := decode[history](t, e.get(t, "/v2/commoditieshistory", vals("commodity_name", "gold", "date_from", "2025-12-29", "date_to", "2025-12-31")))
	if got := d.Result.Data[0].Prices; len(got) != 3 || got[0].Date != "2025-12-31" || got[2].Date != "2025-12-29" {
		t.Errorf("daily 2025-12-29..31: %+v", got)
	}
}

// TestCompanyRatingsEndToEnd holds /v2/companyratings to the demo's
// ratings sample: the analysts newest first, and the consensus over each
// analyst's latest rating answered.
func TestCompanyRatingsEndToEnd(t *testing.T) {
	e := demoE2E(t)
	type ratings struct {
		Status struct{ Code int }
		Result struct {
			Basics struct {
				Company string `json:"company_name"`
				Ticker  string
			}
			Output struct {
				Consensus map[string]any `json:"analyst_consensus"`
				Analysts  []struct {
					Name   string `json:"analyst_name"`
					Rating map[string]any
				}
			}
		}
	}
	r := decode[ratings](t, e.get(t, "/v2/companyratings", vals("ticker", "goog")))
	if r.Status.Code != 200 || r.Result.Basics.Ticker != "GOOG" || r.Result.Basics.Company != "Alphabet Inc. Class C" {
		t.Fatalf("basics: %+v", r)
	}
	// The sample's GOOG rows: five ratings by four analysts; Analyst One's
	// older hold is listed but does not count in the consensus.
	if got := len(r.Result.Output.Analysts); got != 5 || r.Result.Output.Analysts[0].Rating["date_rating"] != "2025-11-20" {
		t.Errorf("analysts: %+v", r.Result.Output.Analysts)
	}
	want := map[string]any{"analysts_number": "4", "buy": "2", "hold": "1", "sell": "1", "consensus_conclusion": "Buy",
		"analyst_average": "211.67", "analyst_highest": "230.00", "analyst_lowest": "195.00", "consensus_date": "2025-11-20", "stock_price": nil}
	for k, v := range want {
		if got := r.Result.Output.Consensus[k]; got != v {
			t.Errorf("consensus %s = %v, want %v", k, got, v)
		}
	}
	held := decode[ratings](t, e.get(t, "/v2/companyratings", vals("ticker", "GOOG", "rated", "hold", "date_to", "2025-06-30")))
	if a := held.Result.Output.Analysts; len(a) != 1 || a[0].Name != "Analyst One" || a[0].Rating["price_target"] != "180" {
		t.Errorf("hold before July: %+v", a)
	}
	if c := held.Result.Output.Consensus; c["consensus_conclusion"] != "Hold" || c["analysts_number"] != "1" {
		t.Errorf("hold before July consensus: %v", c)
	}
	for _, c := range []struct {
		q    []string
		code int
	}{
		{[]string{"ticker", "NOPE"}, 404},
		{nil, 422},
		{[]string{"ticker", "GOOG", "rated", "strong_buy"}, 422},
	} {
		if rec := e.get(t, "/v2/companyratings", vals(c.q...)); rec.Code != c.code {
			t.Errorf("companyratings %v: %d, want %d: %s", c.q, rec.Code, c.code, rec.Body)
		}
	}
}

// TestBondsEndToEnd holds /v2/bondlist and /v2/bond to the demo's bond
// sample.
func TestBondsEndToEnd(t *testing.T) {
	e := demoE2E(t)
	type list struct {
		Pagination struct{ Count, Total int }
		Data       []map[string]any
	}
	l := decode[list](t, e.get(t, "/v2/bondlist", vals("limit", "2", "offset", "1")))
	if l.Pagination.Total != 3 || len(l.Data) != 2 || l.Data[0]["country"] != "japan" || l.Data[1]["country"] != "united states" {
		t.Errorf("bondlist page 2: %+v", l)
	}
	var us [][]string
	for _, r := range demoCSV(t, "bonds-synthetic.csv") {
		if r[0] == "united states" && r[2] == "10Y" {
			us = append(us, r)
		}
	}
	last, prev := us[len(us)-1], us[len(us)-2]
	b := decode[list](t, e.get(t, "/v2/bond", vals("country", "United States")))
	if len(b.Data) != 2 || b.Data[0]["type"] != "10Y" || b.Data[1]["type"] != "2Y" {
		t.Fatalf("bond united states: %+v", b)
	}
	lastY, _ := strconv.ParseFloat(last[4], 64)
	prevY, _ := strconv.ParseFloat(prev[4], 64)
	want := map[string]any{"country": "united states", "region": "North America", "yield": strconv.FormatFloat(lastY, 'f', -1, 64),
		"price_change_day": strconv.FormatFloat(lastY-prevY, 'f', 2, 64), "date": last[3]}
	for k, v := range want {
		if got := b.Data[0][k]; got != v {
			t.Errorf("bond 10Y %s = %v, want %v", k, got, v)
		}
	}
	// The sample starts 2024-10-01: a year back from 2025-12-31 is in it.
	if b.Data[0]["percentage_year"] == nil {
		t.Error("percentage_year is null")
	}
	for _, c := range []struct {
		q    []string
		code int
	}{{[]string{"country", "atlantis"}, 404}, {nil, 422}} {
		if rec := e.get(t, "/v2/bond", vals(c.q...)); rec.Code != c.code {
			t.Errorf("bond %v: %d, want %d: %s", c.q, rec.Code, c.code, rec.Body)
		}
	}
}

// TestETFsEndToEnd holds /v2/etflist and /v2/etfholdings to the demo's ETF
// sample.
func TestETFsEndToEnd(t *testing.T) {
	e := demoE2E(t)
	code, body := getJSON(t, e, "/v2/etflist?list=ticker")
	if code != 200 || field(t, body, "pagination", "total") != 2.0 || field(t, body, "data", "0", "ticker") != "SMPL" || field(t, body, "data", "1", "ticker") != "SMPX" {
		t.Errorf("etflist: %d %v", code, body)
	}
	type holdings struct {
		Basics map[string]any
		Output struct {
			Attributes map[string]any
			Signature  map[string]any
			Holdings   []struct {
				Security map[string]any `json:"investment_security"`
			}
		}
	}
	// The newest filing, its holdings in the file's order.
	h := decode[holdings](t, e.get(t, "/v2/etfholdings", vals("ticker", "smpl")))
	if h.Output.Attributes["end_report_period"] != "2025-09-30" || h.Output.Attributes["date_report_period"] != "2025-01-01" ||
		h.Basics["fund_name"] != "Sample Index Trust" || h.Basics["cik"] != nil || h.Output.Signature["date_signed"] != "2025-11-21" {
		t.Errorf("newest filing: %+v", h)
	}
	if n := len(h.Output.Holdings); n != 5 || h.Output.Holdings[0].Security["name"] != "NVIDIA Corporation" ||
		h.Output.Holdings[0].Security["value_usd"] != "279000" || h.Output.Holdings[4].Security["balance"] != nil {
		t.Errorf("holdings: %+v", h.Output.Holdings)
	}
	older := decode[holdings](t, e.get(t, "/v2/etfholdings", vals("ticker", "SMPL", "date_to", "2025-07-31")))
	if older.Output.Attributes["end_report_period"] != "2025-06-30" || len(older.Output.Holdings) != 4 {
		t.Errorf("filing through July: %+v", older)
	}
	for _, c := range []struct {
		path string
		q    []string
		code int
	}{
		{"/v2/etfholdings", []string{"ticker", "NOPE"}, 404},
		{"/v2/etfholdings", []string{"ticker", "SMPL", "date_to", "2025-01-01"}, 404},
		{"/v2/etfholdings", nil, 422},
		{"/v2/etflist", []string{"list", "isin"}, 422},
	} {
		if rec := e.get(t, c.path, vals(c.q...)); rec.Code != c.code {
			t.Errorf("%s %v: %d, want %d: %s", c.path, c.q, rec.Code, c.code, rec.Body)
		}
	}
}

// TestEDGAREndToEnd holds the v2 EDGAR functions to the demo's SEC
// documents (synthetic, in SEC's layout).
func TestEDGAREndToEnd(t *testing.T) {
	e := demoE2E(t)
	code, body := getJSON(t, e, "/v2/cik_code?company_name=EXAMPLE")
	if code != 200 || field(t, body, "pagination", "total") != 1.0 || field(t, body, "data", "0", "cik_code") != "0000000042" ||
		field(t, body, "data", "0", "sic") != "7372" {
		t.Errorf("cik_code: %d %v", code, body)
	}
	// A company loaded from its facts alone is found, with null SEC fields.
	if code, body := getJSON(t, e, "/v2/cik_code?company_name=widgets"); code != 200 || field(t, body, "data", "0", "ein") != nil {
		t.Errorf("cik_code widgets: %d %v", code, body)
	}
	code, body = getJSON(t, e, "/v2/company_name?cik_code=42")
	if code != 200 || field(t, body, "data", "0", "company_name") != "Example Demo Corp" || field(t, body, "data", "0", "Incorporationstate") != "DE" ||
		field(t, body, "addresses", "mailing", "zipCode") != "90000" {
		t.Errorf("company_name: %d %v", code, body)
	}
	code, body = getJSON(t, e, "/v2/submissions?cik_code_name=CIK0000000042-submissions.json&report_from=2025-01-01")
	if code != 200 || field(t, body, "data", "name") != "Example Demo Corp" || field(t, body, "data", "addresses", "mailing", "zip_Code") != "90000" {
		t.Fatalf("submissions: %d %v", code, body)
	}
	recent := field(t, body, "data", "filings", "recent").(map[string]any)
	if acc := recent["accession_Number"].([]any); len(acc) != 2 || acc[0] != "0000000042-25-000012" || recent["core_type"].([]any)[0] != "10-Q" {
		t.Errorf("submissions reported in 2025: %v", recent)
	}
	_, body = getJSON(t, e, "/v2/submissions?cik_code=0000000042&accession_number=0000000042-25-000003")
	if acc := field(t, body, "data", "filings", "recent", "form").([]any); len(acc) != 1 || acc[0] != "10-K" {
		t.Errorf("submissions by accession number: %v", acc)
	}
	code, body = getJSON(t, e, "/v2/concept/accounts_payable?cik_code=0000000042")
	if code != 200 || field(t, body, "data", "cik") != 42.0 || field(t, body, "data", "us-gaap", "AccountsPayableCurrent", "units", "USD", "2", "val") != 83900000.0 {
		t.Errorf("concept: %d %v", code, body)
	}
	if code, body := getJSON(t, e, "/v2/company_facts?cik_code=0000000042"); code != 200 || field(t, body, "data", "facts", "us-gaap", "Revenues", "units", "USD", "0", "frame") != "CY2024" {
		t.Errorf("company_facts: %d %v", code, body)
	}
	code, body = getJSON(t, e, "/v2/frames/accounts_payable/USD?frame=cy2024q4i")
	if code != 200 || field(t, body, "data", "tag") != "AccountsPayableCurrent" || field(t, body, "pagination", "total") != 2.0 ||
		field(t, body, "data", "frame_data", "0", "val") != 81200000.0 || field(t, body, "data", "frame_data", "1", "entityName") != "Sample Widgets Inc" {
		t.Errorf("frames: %d %v", code, body)
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/v2/cik_code?company_name=ex", 422},
		{"/v2/company_name?cik_code=12345678901", 404},
		{"/v2/company_name?cik_code=0000000099", 404},
		{"/v2/submissions", 422},
		{"/v2/submissions?cik_code_name=nope.json", 422},
		{"/v2/concept/NoSuchConcept?cik_code=0000000042", 404},
		{"/v2/frames/accounts_payable/USD?frame=CY1999Q1I", 404},
		{"/v2/frames/accounts_payable/USD?frame=2024", 422},
		{"/v2/frames/accounts_payable/USD", 422},
	} {
		if code, body := getJSON(t, e, c.path); code != c.code {
			t.Errorf("%s: %d %v, want %d", c.path, code, body, c.code)
		}
	}
}
