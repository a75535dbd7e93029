package httpapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// maxDatasetName bounds a commodity or country name in a request, as the
// importer bounds them in files.
const maxDatasetName = 64

// needDataset answers a v2 function over dataset d with marketstack's 403
// for a plan without it while none of d is loaded, naming what to load;
// which datasets are loaded is reference data, cached until an import.
func (s *Server) needDataset(d marketdata.Dataset, what string) gin.HandlerFunc {
	missing := &datasetMissingError{dataset: what + ": load it with import --kind " + string(d)}
	return func(c *gin.Context) {
		loaded, err := s.o.Store.LoadedDatasets(c.Request.Context())
		if err != nil {
			s.writeError(c, err)
			return
		}
		if !loaded[d] {
			s.writeError(c, missing)
			return
		}
		c.Next()
	}
}

// datasetName reads a required name parameter (commodity_name, country):
// trimmed, lower case, at most maxDatasetName characters.
func datasetName(p *queryParams, name string) string {
	raw := strings.ToLower(requiredParam(p, name))
	if len(raw) > maxDatasetName {
		p.fail(name, "invalid_"+name, "must have at most "+strconv.Itoa(maxDatasetName)+" characters")
		return ""
	}
	return raw
}

// decimal writes a price or yield as marketstack's v2 datasets do: a
// string.
func decimal(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// onOrBefore is the value of the last point of a series (oldest first)
// dated on or before t, or nil.
func onOrBefore[T any](series []T, date func(T) time.Time, value func(T) float64, t time.Time) *float64 {
	for i := len(series) - 1; i >= 0; i-- {
		if !date(series[i]).After(t) {
			v := value(series[i])
			return &v
		}
	}
	return nil
}

// changes are the day, week, month and year changes of a series' latest
// point, as /v2/indexinfo gives them: a change whose earlier point the
// series lacks is null.
type changes struct {
	PriceChangeDay  *string `json:"price_change_day"`
	PercentageDay   *string `json:"percentage_day"`
	PercentageWeek  *string `json:"percentage_week"`
	PercentageMonth *string `json:"percentage_month"`
	PercentageYear  *string `json:"percentage_year"`
}

func changesOf[T any](series []T, date func(T) time.Time, value func(T) float64) changes {
	last := series[len(series)-1]
	now, at := value(last), date(last)
	var prev *float64
	if len(series) > 1 {
		v := value(series[len(series)-2])
		prev = &v
	}
	return changesFrom(now, prev, onOrBefore(series, date, value, at.AddDate(0, 0, -7)),
		onOrBefore(series, date, value, at.AddDate(0, -1, 0)), onOrBefore(series, date, value, at.AddDate(-1, 0, 0)))
}

// changesFrom are the changes of now from the earlier values given; a nil
// one has a null change.
func changesFrom(now float64, prev, week, month, year *float64) changes {
	out := changes{PercentageDay: percentChange(now, prev), PercentageWeek: percentChange(now, week),
		PercentageMonth: percentChange(now, month), PercentageYear: percentChange(now, year)}
	if prev != nil {
		d := strconv.FormatFloat(now-*prev, 'f', 2, 64)
		out.PriceChangeDay = &d
	}
	return out
}

// commodityJSON is an item of v2's /commodities: the latest price and its
// changes, and the last price of each quarter of 2025 (null for a quarter
// the series has no price in). datetime is RFC 3339, the date-time format
// v2's document gives it, unlike the +0000 of the price records.
type commodityJSON struct {
	Name  string `json:"commodity_name"`
	Unit  string `json:"commodity_unit"`
	Price string `json:"commodity_price"`
	changes
	Quarter1 *string `json:"quarter1_25"`
	Quarter2 *string `json:"quarter2_25"`
	Quarter3 *string `json:"quarter3_25"`
	Quarter4 *string `json:"quarter4_25"`
	Datetime string  `json:"datetime"`
}

func commodityDate(p marketdata.CommodityPrice) time.Time { return p.Date }
func commodityPrice(p marketdata.CommodityPrice) float64  { return p.Price }

func newCommodity(c marketdata.CommoditySeries) commodityJSON {
	last := c.Prices[len(c.Prices)-1]
	out := commodityJSON{Name: c.Name, Unit: c.Unit, Price: decimal(last.Price), changes: changesOf(c.Prices, commodityDate, commodityPrice),
		Datetime: last.Date.UTC().Format("2006-01-02T15:04:05-07:00")}
	for q, dst := range []**string{&out.Quarter1, &out.Quarter2, &out.Quarter3, &out.Quarter4} {
		start := time.Date(2025, time.Month(3*q+1), 1, 0, 0, 0, 0, time.UTC)
		*dst = quarterPrice(c.Prices, start, start.AddDate(0, 3, -1))
	}
	return out
}

// quarterPrice is the last price dated in [start, end], or nil.
func quarterPrice(prices []marketdata.CommodityPrice, start, end time.Time) *string {
	for i := len(prices) - 1; i >= 0; i-- {
		if d := prices[i].Date; !d.After(end) {
			if d.Before(start) {
				return nil
			}
			s := decimal(prices[i].Price)
			return &s
		}
	}
	return nil
}

// commodity reads the commodity that commodity_name names; it answers the
// error itself and reports false when that fails.
func (s *Server) commodity(c *gin.Context, p *queryParams) (marketdata.CommoditySeries, bool) {
	name := datasetName(p, "commodity_name")
	return afterQuery(s, c, p, func(c *gin.Context) (marketdata.CommoditySeries, bool) {
		return lookupPath(s, c, name, func(n string) (string, error) { return n, nil }, s.o.Store.Commodity)
	})
}

// commodities serves /v2/commodities?commodity_name=: a one-item array.
func (s *Server) commodities(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	series, ok := s.commodity(c, p)
	if !ok {
		return
	}
	s.sendValue(c, struct {
		Data []commodityJSON `json:"data"`
	}{[]commodityJSON{newCommodity(series)}})
}

// frequencies are /v2/commoditieshistory's frequency values with the name
// its answer gives each and the period a price stands for.
var frequencies = map[string]struct {
	name   string
	period func(time.Time) string
}{
	"daily":   {"1day", func(t time.Time) string { return t.Format(time.DateOnly) }},
	"weekly":  {"1week", func(t time.Time) string { y, w := t.ISOWeek(); return strconv.Itoa(y*100 + w) }},
	"monthly": {"1month", func(t time.Time) string { return t.Format("2006-01") }},
	"quarterly": {"1quarter", func(t time.Time) string {
		return strconv.Itoa(t.Year()) + "Q" + strconv.Itoa((int(t.Month())+2)/3)
	}},
	"yearly": {"1year", func(t time.Time) string { return strconv.Itoa(t.Year()) }},
}

type commodityPriceJSON struct {
	Price string `json:"commodity_price"`
	Date  string `json:"date"`
}

// commoditiesHistory serves /v2/commoditieshistory: the commodity's prices
// in [date_from, date_to], newest first, one per period of frequency (its
// last price), dated YYYY-MM for monthly and by the price's day otherwise.
func (s *Server) commoditiesHistory(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	from, to := p.dateRange()
	freq := "daily"
	if raw, ok := p.single("frequency"); ok && raw != "" {
		freq = strings.ToLower(raw)
		if _, known := frequencies[freq]; !known {
			p.fail("frequency", "invalid_frequency", "must be daily, weekly, monthly, quarterly or yearly")
		}
	}
	series, ok := s.commodity(c, p)
	if !ok {
		return
	}
	f := frequencies[freq]
	prices := []commodityPriceJSON{}
	lastPeriod := ""
	for i := len(series.Prices) - 1; i >= 0; i-- {
		pr := series.Prices[i]
		if (!from.IsZero() && pr.Date.Before(from)) || (!to.IsZero() && pr.Date.After(to)) {
			continue
		}
		period := f.period(pr.Date)
		if period == lastPeriod {
			continue // newest first: the period's last price is in already
		}
		lastPeriod = period
		date := marketdata.FormatDate(pr.Date)
		if freq == "monthly" {
			date = period
		}
		prices = append(prices, commodityPriceJSON{decimal(pr.Price), date})
	}
	type item struct {
		Name   string               `json:"commodity_name"`
		Unit   string               `json:"commodity_unit"`
		Prices []commodityPriceJSON `json:"commodity_prices"`
	}
	type result struct {
		Basics struct {
			Frequency string `json:"frequency"`
		} `json:"basics"`
		Data []item `json:"data"`
	}
	var r result
	r.Basics.Frequency = f.name
	r.Data = []item{{series.Name, series.Unit, prices}}
	s.sendValue(c, struct {
		Result result `json:"result"`
	}{r})
}

// ratingJSON is an analyst of v2's /companyratings with the rating.
type ratingJSON struct {
	AnalystName string `json:"analyst_name"`
	AnalystFirm string `json:"analyst_firm"`
	AnalystRole string `json:"analyst_role"`
	Rating      struct {
		DateRating  string  `json:"date_rating"`
		TargetDate  *string `json:"target_date"`
		PriceTarget *string `json:"price_target"`
		Rated       string  `json:"rated"`
		Conclusion  string  `json:"conclusion"`
	} `json:"rating"`
}

// consensusJSON is /companyratings' analyst_consensus, computed from the
// latest rating of each analyst among those answered; stock_price is null
// (the ratings carry no price) and so is every figure when no rating is
// answered.
type consensusJSON struct {
	Conclusion     *string `json:"consensus_conclusion"`
	StockPrice     *string `json:"stock_price"`
	AnalystAverage *string `json:"analyst_average"`
	AnalystHighest *string `json:"analyst_highest"`
	AnalystLowest  *string `json:"analyst_lowest"`
	AnalystsNumber string  `json:"analysts_number"`
	Buy            string  `json:"buy"`
	Hold           string  `json:"hold"`
	Sell           string  `json:"sell"`
	ConsensusDate  *string `json:"consensus_date"`
}

func twoDecimals(v float64) *string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return &s
}

// newConsensus computes the consensus of rs, newest first.
func newConsensus(rs []marketdata.Rating) consensusJSON {
	counts := map[string]int{}
	seen := map[[2]string]bool{}
	var targets []float64
	for _, r := range rs {
		analyst := [2]string{r.AnalystFirm, r.AnalystName}
		if seen[analyst] {
			continue // an older rating of an analyst already counted
		}
		seen[analyst] = true
		counts[r.Rated]++
		if r.PriceTarget != nil {
			targets = append(targets, *r.PriceTarget)
		}
	}
	out := consensusJSON{AnalystsNumber: strconv.Itoa(len(seen)), Buy: strconv.Itoa(counts["buy"]),
		Hold: strconv.Itoa(counts["hold"]), Sell: strconv.Itoa(counts["sell"])}
	if len(rs) == 0 {
		return out
	}
	d := marketdata.FormatDate(rs[0].Date)
	out.ConsensusDate = &d
	// The most frequent rating; a tie is hold, the neutral answer.
	conclusion := "Hold"
	switch {
	case counts["buy"] > counts["hold"] && counts["buy"] > counts["sell"]:
		conclusion = "Buy"
	case counts["sell"] > counts["hold"] && counts["sell"] > counts["buy"]:
		conclusion = "Sell"
	}
	out.Conclusion = &conclusion
	if len(targets) > 0 {
		sum, hi, lo := 0.0, targets[0], targets[0]
		for _, v := range targets {
			sum += v
			hi, lo = max(hi, v), min(lo, v)
		}
		out.AnalystAverage, out.AnalystHighest, out.AnalystLowest = twoDecimals(sum/float64(len(targets))), twoDecimals(hi), twoDecimals(lo)
	}
	return out
}

// companyRatings serves /v2/companyratings?ticker=: the company's ratings
// in [date_from, date_to], newest first, optionally only those rated
// buy, hold or sell, with their consensus, in marketstack's status and
// result envelope.
func (s *Server) companyRatings(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw := requiredParam(p, "ticker")
	from, to := p.dateRange()
	rated := ""
	if v, ok := p.single("rated"); ok && v != "" {
		rated = strings.ToLower(v)
		if rated != "buy" && rated != "hold" && rated != "sell" {
			p.fail("rated", "invalid_rated", "must be buy, hold or sell")
		}
	}
	all, ok := afterQuery(s, c, p, func(c *gin.Context) ([]marketdata.Rating, bool) {
		return lookupPath(s, c, raw, marketdata.NormaliseSymbol, s.o.Store.CompanyRatings)
	})
	if !ok {
		return
	}
	var rs []marketdata.Rating
	for _, r := range all {
		if (from.IsZero() || !r.Date.Before(from)) && (to.IsZero() || !r.Date.After(to)) && (rated == "" || r.Rated == rated) {
			rs = append(rs, r)
		}
	}
	analysts := make([]ratingJSON, len(rs))
	for i, r := range rs {
		a := &analysts[i]
		a.AnalystName, a.AnalystFirm, a.AnalystRole = r.AnalystName, r.AnalystFirm, r.AnalystRole
		a.Rating.DateRating, a.Rating.Rated, a.Rating.Conclusion = marketdata.FormatDate(r.Date), r.Rated, r.Conclusion
		if r.TargetDate != nil {
			d := marketdata.FormatDate(*r.TargetDate)
			a.Rating.TargetDate = &d
		}
		a.Rating.PriceTarget = optionalDecimal(r.PriceTarget)
	}
	type basics struct {
		CompanyName string `json:"company_name"`
		Ticker      string `json:"ticker"`
	}
	type output struct {
		Consensus consensusJSON `json:"analyst_consensus"`
		Analysts  []ratingJSON  `json:"analysts"`
	}
	type status struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details string `json:"details"`
	}
	type result struct {
		Basics basics `json:"basics"`
		Output output `json:"output"`
	}
	s.sendValue(c, struct {
		Status status `json:"status"`
		Result result `json:"result"`
	}{status{200, "Success", ""}, result{basics{all[0].CompanyName, all[0].Symbol}, output{newConsensus(rs), analysts}}})
}

// optionalDecimal is decimal of *v, or nil.
func optionalDecimal(v *float64) *string {
	if v == nil {
		return nil
	}
	s := decimal(*v)
	return &s
}

// bondList serves /v2/bondlist: the countries with yields, paged.
func (s *Server) bondList(c *gin.Context) {
	type item struct {
		Country string `json:"country"`
	}
	sendNames(s, c, parseQuery(c.Request.URL.RawQuery), s.o.Store.BondCountries, func(n string) item { return item{n} })
}

// sendNames answers a page of a list of names read by read, each encoded
// by encode, after the page's parameters and any failed before in p.
func sendNames[J any](s *Server, c *gin.Context, p *queryParams, read func(context.Context, marketdata.ListPage) (marketdata.NamePage, error), encode func(string) J) {
	sendPage(s, c, p, func(ctx context.Context, page pagination.Page) ([]string, int64, error) {
		res, err := read(ctx, marketdata.ListPage{Limit: page.Limit, Offset: page.Offset})
		return res.Names, res.Total, err
	}, encode)
}

// bondJSON is an item of v2's /bond: one tenor's latest yield and its
// changes (price_change_day the yield's change in points, the percentages
// its relative change, as /indexinfo gives them).
type bondJSON struct {
	Region          string  `json:"region"`
	Country         string  `json:"country"`
	Type            string  `json:"type"`
	Yield           string  `json:"yield"`
	PriceChangeDay  *string `json:"price_change_day"`
	PercentageWeek  *string `json:"percentage_week"`
	PercentageMonth *string `json:"percentage_month"`
	PercentageYear  *string `json:"percentage_year"`
	Date            string  `json:"date"`
}

func bondDate(y marketdata.BondYield) time.Time { return y.Date }
func bondYield(y marketdata.BondYield) float64  { return y.Yield }

func newBond(series []marketdata.BondYield) bondJSON {
	last := series[len(series)-1]
	ch := changesOf(series, bondDate, bondYield)
	return bondJSON{Region: last.Region, Country: last.Country, Type: last.Type, Yield: decimal(last.Yield),
		PriceChangeDay: ch.PriceChangeDay, PercentageWeek: ch.PercentageWeek, PercentageMonth: ch.PercentageMonth,
		PercentageYear: ch.PercentageYear, Date: marketdata.FormatDate(last.Date)}
}

// bond serves /v2/bond?country=: the country's bonds, one item per
// tenor, in the list envelope.
func (s *Server) bond(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	country := datasetName(p, "country")
	ys, ok := afterQuery(s, c, p, func(c *gin.Context) ([]marketdata.BondYield, bool) {
		return lookupPath(s, c, country, func(n string) (string, error) { return n, nil }, s.o.Store.BondYields)
	})
	if !ok {
		return
	}
	var items []bondJSON
	for start, i := 0, 1; i <= len(ys); i++ {
		if i == len(ys) || ys[i].Type != ys[start].Type {
			items = append(items, newBond(ys[start:i]))
			start = i
		}
	}
	page := pagination.Page{Limit: len(items)}
	sendList(s, c, page, items, int64(len(items)), func(b bondJSON) bondJSON { return b })
}

// etfList serves /v2/etflist?list=ticker: the ETF tickers with filings,
// paged. ticker is the one list marketstack documents, and the default.
func (s *Server) etfList(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	if raw, ok := p.single("list"); ok && raw != "" && !strings.EqualFold(raw, "ticker") {
		p.fail("list", "invalid_list", "must be ticker")
	}
	type item struct {
		Ticker string `json:"ticker"`
	}
	sendNames(s, c, p, s.o.Store.ETFs, func(n string) item { return item{n} })
}

// etfSecurityJSON is a holding of /v2/etfholdings: numbers as strings, as
// marketstack's document gives them; a field the filing did not give is
// null.
type etfSecurityJSON struct {
	LEI             *string `json:"lei"`
	ISIN            *string `json:"isin"`
	Name            string  `json:"name"`
	CUSIP           *string `json:"cusip"`
	Title           *string `json:"title"`
	Units           *string `json:"units"`
	Balance         *string `json:"balance"`
	Currency        *string `json:"currency"`
	ValueUSD        *string `json:"value_usd"`
	LoanByFund      *string `json:"loan_by_fund"`
	PercentValue    *string `json:"percent_value"`
	AssetCategory   *string `json:"asset_category"`
	PayoffProfile   *string `json:"payoff_profile"`
	RestrictedSec   *string `json:"restricted_sec"`
	CashCollateral  *string `json:"cash_collateral"`
	IssuerCategory  *string `json:"issuer_category"`
	FairValueLevel  *string `json:"fair_value_level"`
	InvestedCountry *string `json:"invested_country"`
	NonCash         *string `json:"non_cash_collateral"`
}

func newETFSecurity(h marketdata.ETFSecurity) etfSecurityJSON {
	return etfSecurityJSON{LEI: optional(h.LEI), ISIN: optional(h.ISIN), Name: h.Name, CUSIP: optional(h.CUSIP),
		Title: optional(h.Title), Units: optional(h.Units), Balance: optionalDecimal(h.Balance), Currency: optional(h.Currency),
		ValueUSD: optionalDecimal(h.ValueUSD), LoanByFund: optional(h.LoanByFund), PercentValue: optionalDecimal(h.Percent),
		AssetCategory: optional(h.AssetCategory), PayoffProfile: optional(h.PayoffProfile), RestrictedSec: optional(h.RestrictedSec),
		CashCollateral: optional(h.CashCollateral), IssuerCategory: optional(h.IssuerCategory),
		FairValueLevel: optional(h.FairValueLevel), InvestedCountry: optional(h.InvestedCountry), NonCash: optional(h.NonCash)}
}

func optionalDate(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := marketdata.FormatDate(*t)
	return &s
}

// etfHoldings serves /v2/etfholdings?ticker=: the newest filing of the ETF
// whose report date is in [date_from, date_to], with its holdings in the
// order reported.
func (s *Server) etfHoldings(c *gin.Context) {
	p := parseQuery(c.Request.URL.RawQuery)
	raw := requiredParam(p, "ticker")
	from, to := p.dateRange()
	fh, ok := afterQuery(s, c, p, func(c *gin.Context) (marketdata.ETFFilingHoldings, bool) {
		return lookupPath(s, c, raw, marketdata.NormaliseSymbol, func(ctx context.Context, sym string) (marketdata.ETFFilingHoldings, error) {
			return s.o.Store.ETFHoldings(ctx, marketdata.ETFQuery{Ticker: sym, From: from, To: to})
		})
	})
	if !ok {
		return
	}
	f := fh.Filing
	type basics struct {
		FundName   *string `json:"fund_name"`
		FileNumber *string `json:"file_number"`
		CIK        *string `json:"cik"`
		RegLEI     *string `json:"reg_lei"`
	}
	type attributes struct {
		SeriesName       *string `json:"series_name"`
		SeriesID         *string `json:"series_id"`
		SeriesLEI        *string `json:"series_lei"`
		Ticker           string  `json:"ticker"`
		ISIN             *string `json:"isin"`
		DateReportPeriod *string `json:"date_report_period"`
		EndReportPeriod  string  `json:"end_report_period"`
		FinalFiling      bool    `json:"final_filing"`
	}
	type signature struct {
		DateSigned      *string `json:"date_signed"`
		NameOfApplicant *string `json:"name_of_applicant"`
		Signature       *string `json:"signature"`
		SignerName      *string `json:"signer_name"`
		Title           *string `json:"title"`
	}
	type holding struct {
		Security etfSecurityJSON `json:"investment_security"`
	}
	type output struct {
		Attributes attributes `json:"attributes"`
		Signature  signature  `json:"signature"`
		Holdings   []holding  `json:"holdings"`
	}
	holdings := make([]holding, len(fh.Holdings))
	for i, h := range fh.Holdings {
		holdings[i] = holding{newETFSecurity(h)}
	}
	s.sendValue(c, struct {
		Basics basics `json:"basics"`
		Output output `json:"output"`
	}{
		basics{optional(f.FundName), optional(f.FileNumber), optional(f.CIK), optional(f.RegLEI)},
		output{
			attributes{optional(f.SeriesName), optional(f.SeriesID), optional(f.SeriesLEI), f.Ticker, optional(f.ISIN),
				optionalDate(f.PeriodStart), marketdata.FormatDate(f.ReportDate), f.FinalFiling},
			signature{optionalDate(f.DateSigned), optional(f.NameOfApplicant), optional(f.Signature), optional(f.SignerName), optional(f.SignerTitle)},
			holdings,
		},
	})
}
