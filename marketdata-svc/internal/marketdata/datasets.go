package marketdata

import (
	"context"
	"encoding/json"
	"time"
)

// Dataset names a kind of reference data that marketstack v2 serves
// beside prices and that a deployment loads or not (import --kind): a
// function over a dataset not loaded answers that it is not available.
type Dataset string

// The datasets, by their import kind.
const (
	DatasetCommodities Dataset = "commodities"
	DatasetRatings     Dataset = "ratings"
	DatasetBonds       Dataset = "bonds"
	DatasetETFs        Dataset = "etfs"
	DatasetEDGAR       Dataset = "edgar"
)

// Datasets lists the datasets a deployment can load, in the order the
// store reports them.
var Datasets = []Dataset{DatasetCommodities, DatasetRatings, DatasetBonds, DatasetETFs, DatasetEDGAR}

// LoadedDatasets tells which datasets hold at least one row.
type LoadedDatasets map[Dataset]bool

// CommodityPrice is one price of a commodity on a day, in its unit
// (per troy ounce, per barrel...).
type CommodityPrice struct {
	Name  string // lower case, as marketstack's commodity_name
	Unit  string
	Date  time.Time
	Price float64
}

// CommoditySeries is one commodity's prices, oldest first.
type CommoditySeries struct {
	Name, Unit string
	Prices     []CommodityPrice
}

// Rating is one analyst's rating of a company on a day.
type Rating struct {
	Symbol      string
	CompanyName string
	AnalystName string
	AnalystFirm string
	AnalystRole string
	Date        time.Time
	// TargetDate and PriceTarget are nil when the analyst gave none.
	TargetDate  *time.Time
	PriceTarget *float64
	Rated       string // buy, hold or sell
	Conclusion  string
}

// BondYield is a government bond's yield on a day: one country's bond of
// one tenor (Type, like "10Y").
type BondYield struct {
	Country string // lower case, as /v2/bond?country= names it
	Region  string
	Type    string
	Date    time.Time
	Yield   float64
}

// ETFFiling is one ETF's holdings report: the fund, the series, the period
// and the signature. Empty strings are fields the source did not give.
type ETFFiling struct {
	Ticker          string
	ReportDate      time.Time // end of the report period
	PeriodStart     *time.Time
	FundName        string
	FileNumber      string
	CIK             string
	RegLEI          string
	SeriesName      string
	SeriesID        string
	SeriesLEI       string
	ISIN            string
	FinalFiling     bool
	DateSigned      *time.Time
	NameOfApplicant string
	Signature       string
	SignerName      string
	SignerTitle     string
}

// ETFSecurity is one holding of a filing. Numbers the source did not give
// are nil.
type ETFSecurity struct {
	Name, Title, LEI, ISIN, CUSIP string
	Units                         string
	Balance, ValueUSD, Percent    *float64
	Currency                      string
	AssetCategory, IssuerCategory string
	PayoffProfile                 string
	FairValueLevel                string
	InvestedCountry               string
	LoanByFund, RestrictedSec     string
	CashCollateral, NonCash       string
}

// ETFQuery selects the newest of one ETF's filings whose report date is in
// [From, To] (a zero bound is open).
type ETFQuery struct {
	Ticker   string
	From, To time.Time
}

// ETFFilingHoldings is a filing with its holdings.
type ETFFilingHoldings struct {
	Filing   ETFFiling
	Holdings []ETFSecurity
}

// EDGARCompany is a company's SEC EDGAR documents, as SEC's APIs serve
// them (its submissions JSON and its company-facts JSON): the v2 EDGAR
// functions answer from them. A document not loaded is nil.
type EDGARCompany struct {
	CIK         string // ten digits, with the leading zeros
	Name        string
	Submissions json.RawMessage
	Facts       json.RawMessage
}

// EDGARQuery selects the companies whose name contains Name
// (case-insensitive), by name.
type EDGARQuery struct {
	Name string
	Page ListPage
}

// EDGARPage is a page of companies and how many match.
type EDGARPage struct {
	Companies []EDGARCompany
	Total     int64
}

// FrameQuery selects, across companies, the facts of one concept in one
// unit whose frame (SEC's calendar period, like CY2023Q1I) is Frame.
type FrameQuery struct {
	Taxonomy, Tag, Unit, Frame string
}

// FramePoint is one company's fact of a frame.
type FramePoint struct {
	CIK                int64
	EntityName         string
	Accn, End          string
	Value              float64
	Label, Description string
}

// ListPage selects a page of a list by position.
type ListPage struct {
	Limit, Offset int
}

// NamePage is one page of names (ETF tickers, bond countries) and how many
// there are.
type NamePage struct {
	Names []string
	Total int64
}

// DatasetStore is the read side of the v2 datasets. Each read of a named
// item returns ErrNotFound when there is none; none is called on a
// dataset that LoadedDatasets reports empty.
type DatasetStore interface {
	LoadedDatasets(ctx context.Context) (LoadedDatasets, error)
	// Commodity returns the named commodity's whole series.
	Commodity(ctx context.Context, name string) (CommoditySeries, error)
	// CompanyRatings returns a symbol's ratings, newest first.
	CompanyRatings(ctx context.Context, symbol string) ([]Rating, error)
	// BondCountries returns a page of the countries with yields, by name.
	BondCountries(ctx context.Context, p ListPage) (NamePage, error)
	// BondYields returns a country's yields, by tenor then date, oldest
	// first.
	BondYields(ctx context.Context, country string) ([]BondYield, error)
	// ETFs returns a page of the tickers with filings, by ticker.
	ETFs(ctx context.Context, p ListPage) (NamePage, error)
	// ETFHoldings returns q's filing with its holdings in their order.
	ETFHoldings(ctx context.Context, q ETFQuery) (ETFFilingHoldings, error)
	// EDGARCompanies returns a page of q's companies (their submissions,
	// not their facts).
	EDGARCompanies(ctx context.Context, q EDGARQuery) (EDGARPage, error)
	// EDGARCompany returns one company by its ten-digit CIK.
	EDGARCompany(ctx context.Context, cik string) (EDGARCompany, error)
	// Frame returns q's facts, by CIK; ErrNotFound when there are none.
	Frame(ctx context.Context, q FrameQuery) ([]FramePoint, error)
}
