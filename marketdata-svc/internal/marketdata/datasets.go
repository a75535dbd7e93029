package marketdata

import (
	"context"
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
)

// Datasets lists the datasets a deployment can load, in the order the
// store reports them.
var Datasets = []Dataset{DatasetCommodities, DatasetRatings, DatasetBonds, DatasetETFs}

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
}
