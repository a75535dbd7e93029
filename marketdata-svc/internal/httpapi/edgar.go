package httpapi

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// The v2 EDGAR functions answer from SEC's own documents (submissions and
// company facts, kept as SEC serves them), renamed to marketstack's keys.

// secSubmissions is the part of SEC's submissions document the functions
// answer.
type secSubmissions struct {
	CIK                               string   `json:"cik"`
	EntityType                        *string  `json:"entityType"`
	SIC                               *string  `json:"sic"`
	SICDescription                    *string  `json:"sicDescription"`
	OwnerOrg                          *string  `json:"ownerOrg"`
	InsiderTransactionForOwnerExists  *int     `json:"insiderTransactionForOwnerExists"`
	InsiderTransactionForIssuerExists *int     `json:"insiderTransactionForIssuerExists"`
	Name                              string   `json:"name"`
	Tickers                           []string `json:"tickers"`
	Exchanges                         []string `json:"exchanges"`
	EIN                               *string  `json:"ein"`
	Description                       *string  `json:"description"`
	Website                           *string  `json:"website"`
	InvestorWebsite                   *string  `json:"investorWebsite"`
	Category                          *string  `json:"category"`
	FiscalYearEnd                     *string  `json:"fiscalYearEnd"`
	StateOfIncorporation              *string  `json:"stateOfIncorporation"`
	StateOfIncorporationDescription   *string  `json:"stateOfIncorporationDescription"`
	Addresses                         struct {
		Mailing  secAddress `json:"mailing"`
		Business secAddress `json:"business"`
	} `json:"addresses"`
	Phone       *string `json:"phone"`
	FormerNames []struct {
		Name string  `json:"name"`
		From *string `json:"from"`
		To   *string `json:"to"`
	} `json:"formerNames"`
	Filings struct {
		Recent map[string][]json.RawMessage `json:"recent"`
		Files  []struct {
			Name        string  `json:"name"`
			FilingCount int     `json:"filingCount"`
			FilingFrom  *string `json:"filingFrom"`
			FilingTo    *string `json:"filingTo"`
		} `json:"files"`
	} `json:"filings"`
}

type secAddress struct {
	Street1                   *string `json:"street1"`
	Street2                   *string `json:"street2"`
	City                      *string `json:"city"`
	StateOrCountry            *string `json:"stateOrCountry"`
	ZipCode                   *string `json:"zipCode"`
	StateOrCountryDescription *string `json:"stateOrCountryDescription"`
}

// submissionsOf decodes c's submissions; a company loaded from its facts
// alone has none, and answers with its name and nulls.
func submissionsOf(c marketdata.EDGARCompany) secSubmissions {
	sub := secSubmissions{CIK: c.CIK, Name: c.Name}
	if c.Submissions != nil {
		_ = json.Unmarshal(c.Submissions, &sub) // checked when imported
		sub.Name = c.Name
	}
	return sub
}

// companyJSON is an item of /v2/cik_code and /v2/company_name.
type companyJSON struct {
	CIK            string  `json:"cik_code"`
	Name           string  `json:"company_name"`
	EIN            *string `json:"ein"`
	SIC            *string `json:"sic"`
	SICDescription *string `json:"sic_description"`
}

func newCompany(c marketdata.EDGARCompany) companyJSON {
	sub := submissionsOf(c)
	return companyJSON{CIK: c.CIK, Name: c.Name, EIN: sub.EIN, SIC: sub.SIC, SICDescription: sub.SICDescription}
}

// cikCode serves /v2/cik_code?company_name=: the companies whose name
// contains the text (at least 3 characters), by name, paged.
func (s *Server) cikCode(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	name := requiredParam(p, "company_name")
	if n := len([]rune(name)); !p.failed("company_name") && (n < 3 || n > maxDatasetName) {
		p.fail("company_name", "invalid_company_name", "must have 3 to "+strconv.Itoa(maxDatasetName)+" characters")
	}
	sendPage(s, c, p, func(ctx context.Context, page pagination.Page) ([]marketdata.EDGARCompany, int64, error) {
		res, err := s.o.Store.EDGARCompanies(ctx, marketdata.EDGARQuery{Name: name, Page: marketdata.ListPage{Limit: page.Limit, Offset: page.Offset}})
		return res.Companies, res.Total, err
	}, newCompany)
}

// edgarCompany reads the company that cik_code names (1 to 10 digits);
// it answers the error itself and reports false when that fails.
func (s *Server) edgarCompany(c *gin.Context, p *queryParams, raw string) (marketdata.EDGARCompany, bool) {
	return afterQuery(s, c, p, func(c *gin.Context) (marketdata.EDGARCompany, bool) {
		return lookupPath(s, c, raw, importer.ParseCIK, s.o.Store.EDGARCompany)
	})
}

// companyName serves /v2/company_name?cik_code=.
func (s *Server) companyName(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	co, ok := s.edgarCompany(c, p, requiredParam(p, "cik_code"))
	if !ok {
		return
	}
	sub := submissionsOf(co)
	type item struct {
		companyJSON
		Phone              *string `json:"phone"`
		IncorporationState *string `json:"Incorporationstate"`
	}
	type address struct {
		Street1        *string `json:"street1"`
		Street2        *string `json:"street2"`
		City           *string `json:"city"`
		StateOrCountry *string `json:"state_or_country"`
		ZipCode        *string `json:"zipCode"`
	}
	addr := func(a secAddress) address { return address{a.Street1, a.Street2, a.City, a.StateOrCountry, a.ZipCode} }
	s.sendValue(c, struct {
		Data      []item `json:"data"`
		Addresses struct {
			Mailing  address `json:"mailing"`
			Business address `json:"business"`
		} `json:"addresses"`
	}{Data: []item{{newCompany(co), sub.Phone, sub.StateOfIncorporation}},
		Addresses: struct {
			Mailing  address `json:"mailing"`
			Business address `json:"business"`
		}{addr(sub.Addresses.Mailing), addr(sub.Addresses.Business)}})
}

// recentColumns are SEC's columns of the recent filings under
// marketstack's names, in marketstack's order. core_type has no SEC
// column: it is the form (SEC's form type is the filing's core type).
var recentColumns = [...]struct{ sec, v2 string }{
	{"accessionNumber", "accession_Number"}, {"filingDate", "filing_Date"}, {"reportDate", "report_Date"},
	{"acceptanceDateTime", "acceptance_Date_Time"}, {"act", "act"}, {"form", "form"}, {"fileNumber", "file_Number"},
	{"filmNumber", "film_Number"}, {"form", "core_type"}, {"size", "size"}, {"primaryDocument", "primary_Document"},
	{"primaryDocDescription", "primary_Doc_Description"},
}

var cikFileName = regexp.MustCompile(`^CIK([0-9]{10})-submissions\.json$`)

// submissions serves /v2/submissions?cik_code= (or cik_code_name=
// CIK##########-submissions.json): the company's submissions, its recent
// filings filtered by report and filing date and accession number.
func (s *Server) submissions(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw, _ := p.single("cik_code")
	if name, ok := p.single("cik_code_name"); ok && name != "" && raw == "" {
		if m := cikFileName.FindStringSubmatch(name); m != nil {
			raw = m[1]
		} else {
			p.fail("cik_code_name", "invalid_cik_code_name", "must be CIK##########-submissions.json")
		}
	}
	if raw == "" && !p.failed("cik_code_name") {
		p.fail("cik_code", "missing_cik_code", "You did not specify a cik_code or cik_code_name.")
	}
	dates := map[string][2]string{}
	for _, f := range []struct{ col, from, to string }{{"reportDate", "report_from", "report_to"}, {"filingDate", "filing_from", "filing_to"}} {
		lo, hi := p.date(f.from), p.date(f.to)
		dates[f.col] = [2]string{dateText(lo), dateText(hi)}
	}
	accn, _ := p.single("accession_number")
	co, ok := s.edgarCompany(c, p, raw)
	if !ok {
		return
	}
	sub := submissionsOf(co)
	recent := sub.Filings.Recent
	keep := func(i int) bool {
		if accn != "" && text(recent["accessionNumber"], i) != accn {
			return false
		}
		for col, r := range dates {
			d := text(recent[col], i)
			if (r[0] != "" && d < r[0]) || (r[1] != "" && (d == "" || d > r[1])) {
				return false
			}
		}
		return true
	}
	out := map[string][]json.RawMessage{}
	for _, col := range recentColumns {
		out[col.v2] = []json.RawMessage{}
	}
	for i := range recent["accessionNumber"] {
		if !keep(i) {
			continue
		}
		for _, col := range recentColumns {
			v := json.RawMessage("null")
			if vs := recent[col.sec]; i < len(vs) {
				v = vs[i]
			}
			out[col.v2] = append(out[col.v2], v)
		}
	}
	type address struct {
		Street1            *string `json:"street1"`
		Street2            *string `json:"street2"`
		City               *string `json:"city"`
		StateOrCountry     *string `json:"state_or_country"`
		ZipCode            *string `json:"zip_Code,omitempty"`
		BusinessZipCode    *string `json:"zipCode,omitempty"`
		StateOrCountryDesc *string `json:"state_or_country_desc"`
	}
	type formerName struct {
		Name string  `json:"name"`
		From *string `json:"from"`
		To   *string `json:"to"`
	}
	type file struct {
		Name        string  `json:"name"`
		FilingCount int     `json:"filing_Count"`
		FilingFrom  *string `json:"filing_From"`
		FilingTo    *string `json:"filing_To"`
	}
	m, b := sub.Addresses.Mailing, sub.Addresses.Business
	former := make([]formerName, len(sub.FormerNames))
	for i, f := range sub.FormerNames {
		former[i] = formerName{f.Name, f.From, f.To}
	}
	files := make([]file, len(sub.Filings.Files))
	for i, f := range sub.Filings.Files {
		files[i] = file{f.Name, f.FilingCount, f.FilingFrom, f.FilingTo}
	}
	tickers, exchanges := sub.Tickers, sub.Exchanges
	if tickers == nil {
		tickers = []string{}
	}
	if exchanges == nil {
		exchanges = []string{}
	}
	data := map[string]any{
		"cik": co.CIK, "entity_type": sub.EntityType, "sic": sub.SIC, "sic_description": sub.SICDescription,
		"owner_org": sub.OwnerOrg, "insider_Transaction_For_Owner_Exists": sub.InsiderTransactionForOwnerExists,
		"insider_Transaction_For_Issuer_Exists": sub.InsiderTransactionForIssuerExists, "name": co.Name,
		"tickers": tickers, "exchanges": exchanges, "ein": sub.EIN, "description": sub.Description,
		"website": sub.Website, "investor_Website": sub.InvestorWebsite, "category_filer": sub.Category,
		"fiscal_Year_End": sub.FiscalYearEnd, "incorporation_state_or_country": sub.StateOfIncorporation,
		"incorporation_state_or_country_desc": sub.StateOfIncorporationDescription,
		"addresses": map[string]address{
			// marketstack spells the mailing zip zip_Code and the business
			// one zipCode.
			"mailing":  {m.Street1, m.Street2, m.City, m.StateOrCountry, orEmpty(m.ZipCode), nil, m.StateOrCountryDescription},
			"business": {b.Street1, b.Street2, b.City, b.StateOrCountry, nil, orEmpty(b.ZipCode), b.StateOrCountryDescription},
		},
		"phone": sub.Phone, "former_Names": former,
		"filings": map[string]any{"recent": out, "files": files},
	}
	s.sendValue(c, map[string]any{"data": data})
}

// orEmpty keeps a key that omitempty would drop for a nil value: an
// address names its zip code even when SEC gives none.
func orEmpty(s *string) *string {
	if s == nil {
		e := ""
		return &e
	}
	return s
}

// dateText is an optional date as SEC writes it, "" when open.
func dateText(d time.Time) string {
	if d.IsZero() {
		return ""
	}
	return marketdata.FormatDate(d)
}

// text is entry i of a column of strings, or "".
func text(col []json.RawMessage, i int) string {
	var s string
	if i < len(col) {
		_ = json.Unmarshal(col[i], &s)
	}
	return s
}

// factsDocument is SEC's company-facts document as the functions read it.
type factsDocument struct {
	CIK   int64                                 `json:"cik"`
	Facts map[string]map[string]json.RawMessage `json:"facts"`
}

// companyFacts reads the company that cik_code names with its facts; it
// answers the error itself (404 for a company without facts) and reports
// false when that fails.
func (s *Server) companyFacts(c *gin.Context, p *queryParams) (marketdata.EDGARCompany, factsDocument, bool) {
	var doc factsDocument
	co, ok := s.edgarCompany(c, p, requiredParam(p, "cik_code"))
	if !ok {
		return co, doc, false
	}
	if co.Facts == nil || json.Unmarshal(co.Facts, &doc) != nil {
		s.writeError(c, marketdata.ErrNotFound)
		return co, doc, false
	}
	return co, doc, true
}

// companyFactsAll serves /v2/company_facts?cik_code=: every fact of the
// company, as SEC's document holds them.
func (s *Server) companyFactsAll(c *gin.Context) {
	co, doc, ok := s.companyFacts(c, parseQuery(c.Request.URL.RawQuery))
	if !ok {
		return
	}
	s.sendValue(c, map[string]any{"data": map[string]any{"cik": doc.CIK, "company_name": co.Name, "facts": doc.Facts}})
}

// conceptAliases are the snake-case names marketstack gives us-gaap
// concepts in its paths (its documentation shows accounts_payable).
var conceptAliases = map[string]string{"accounts_payable": "AccountsPayableCurrent"}

// usGAAPTag is the us-gaap tag a path's concept names: an alias, or the
// tag itself (letters and digits).
func usGAAPTag(concept string) (string, bool) {
	if tag, ok := conceptAliases[strings.ToLower(concept)]; ok {
		return tag, true
	}
	return concept, concept != "" && len(concept) <= 200 && strings.IndexFunc(concept, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// concept serves /v2/concept/{concept}?cik_code=: one us-gaap concept of
// the company, every unit.
func (s *Server) concept(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	tag, ok := usGAAPTag(c.Param("concept"))
	co, doc, found := s.companyFacts(c, p)
	if !found {
		return
	}
	fact, has := doc.Facts["us-gaap"][tag]
	if !ok || !has {
		s.writeError(c, marketdata.ErrNotFound)
		return
	}
	s.sendValue(c, map[string]any{"data": map[string]any{"cik": doc.CIK, "company_name": co.Name,
		"us-gaap": map[string]json.RawMessage{tag: fact}}})
}

var frameName = regexp.MustCompile(`^CY[0-9]{4}(Q[1-4])?I?$`)
var unitName = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// frame serves /v2/frames/{concept}/{unit}?frame=: the concept's fact of
// each company for SEC's calendar frame (CY2019, CY2019Q1, CY2019Q1I).
func (s *Server) frame(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	fr := strings.ToUpper(requiredParam(p, "frame"))
	if fr != "" && !frameName.MatchString(fr) {
		p.fail("frame", "invalid_frame", "must be CY####, CY####Q# or CY####Q#I")
	}
	if err := p.err(); err != nil {
		s.writeError(c, err)
		return
	}
	tag, ok := usGAAPTag(c.Param("concept"))
	unit := c.Param("unit")
	if !ok || !unitName.MatchString(unit) {
		s.writeError(c, marketdata.ErrNotFound)
		return
	}
	points, err := s.o.Store.Frame(c.Request.Context(), marketdata.FrameQuery{Taxonomy: "us-gaap", Tag: tag, Unit: unit, Frame: fr})
	if err != nil {
		s.writeError(c, err)
		return
	}
	type point struct {
		Accn       string  `json:"accn"`
		CIK        int64   `json:"cik"`
		EntityName string  `json:"entityName"`
		End        string  `json:"end"`
		Val        float64 `json:"val"`
	}
	data := make([]point, len(points))
	for i, x := range points {
		data[i] = point{x.Accn, x.CIK, x.EntityName, x.End, x.Value}
	}
	s.sendValue(c, map[string]any{
		"pagination": pagination.NewEnvelope(pagination.Page{Limit: len(data)}, len(data), int64(len(data))),
		"data": map[string]any{"taxonomy": "us-gaap", "tag": tag, "ccp": fr, "uom": unit, "label": points[0].Label,
			"description": points[0].Description, "frame_data": data},
	})
}
