package httpapi

import (
	"strconv"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// apiVersion selects the answer shapes of marketstack v1 or v2 where the
// two differ; everything else is served alike under both prefixes.
type apiVersion int

const (
	v1 apiVersion = 1
	v2 apiVersion = 2
)

// exchangeV2JSON is v2's exchange: ISO 10383's registry fields in place of
// v1's timezone and currency objects. Fields this service has no source
// for are null.
type exchangeV2JSON struct {
	Name               string  `json:"name"`
	Acronym            string  `json:"acronym"`
	MIC                string  `json:"mic"`
	Country            *string `json:"country"`
	CountryCode        string  `json:"country_code"`
	City               string  `json:"city"`
	Website            string  `json:"website"`
	OperatingMIC       string  `json:"operating_mic"`
	OprtSgmt           string  `json:"oprt_sgmt"`
	LegalEntityName    *string `json:"legal_entity_name"`
	ExchangeLEI        *string `json:"exchange_lei"`
	MarketCategoryCode *string `json:"market_category_code"`
	ExchangeStatus     string  `json:"exchange_status"`
	DateCreation       *string `json:"date_creation"`
	DateLastUpdate     *string `json:"date_last_update"`
	DateLastValidation *string `json:"date_last_validation"`
	DateExpiry         *string `json:"date_expiry"`
	Comments           *string `json:"comments"`
}

func newExchangeV2(x marketdata.Exchange) exchangeV2JSON {
	return exchangeV2JSON{Name: x.Name, Acronym: x.Acronym, MIC: x.MIC, Country: optional(x.Country),
		CountryCode: x.CountryCode, City: x.City, Website: x.Website,
		// Every exchange served is an operating MIC of its own.
		OperatingMIC: x.MIC, OprtSgmt: "OPRT", ExchangeStatus: "ACTIVE"}
}

// exchangeOf is the exchange object of version v.
func exchangeOf(x marketdata.Exchange, v apiVersion) any {
	if v == v2 {
		return newExchangeV2(x)
	}
	return newExchange(x)
}

// tickerV2JSON is v2's /tickers/{symbol}: identifiers and classification
// this service has no source for are null.
type tickerV2JSON struct {
	Name          string          `json:"name"`
	Symbol        string          `json:"symbol"`
	CIK           *string         `json:"cik"`
	ISIN          *string         `json:"isin"`
	CUSIP         *string         `json:"cusip"`
	EINEmployerID *string         `json:"ein_employer_id"`
	LEI           *string         `json:"lei"`
	SeriesID      *string         `json:"series_id"`
	ItemType      string          `json:"item_type"`
	Sector        *string         `json:"sector"`
	Industry      *string         `json:"industry"`
	SICCode       *string         `json:"sic_code"`
	SICName       *string         `json:"sic_name"`
	StockExchange *exchangeV2JSON `json:"stock_exchange"`
}

// itemType is v2's lower-case instrument class.
func itemType(assetType string) string {
	if assetType == "Stock" {
		return "equity"
	}
	return strings.ToLower(assetType)
}

func newTickerV2(t marketdata.Ticker) tickerV2JSON {
	out := tickerV2JSON{Name: t.Name, Symbol: t.Symbol, ItemType: itemType(t.AssetType)}
	if t.Exchange != nil {
		x := newExchangeV2(*t.Exchange)
		out.StockExchange = &x
	}
	return out
}

// tickerHeadOf is the ticker object that /tickers/{symbol}/eod of version
// v wraps its records in.
func tickerHeadOf(t marketdata.Ticker, v apiVersion) any {
	if v == v2 {
		// Unlike v1, v2 names no exchange here.
		return newTickerHead(t)
	}
	return newTicker(t)
}

// tickersListJSON is an item of v2's /tickerslist, which names the symbol
// "ticker" and gives a short exchange.
type tickersListJSON struct {
	Name          string               `json:"name"`
	Ticker        string               `json:"ticker"`
	HasIntraday   bool                 `json:"has_intraday"`
	HasEOD        bool                 `json:"has_eod"`
	StockExchange *exchangeBriefV2JSON `json:"stock_exchange"`
}

type exchangeBriefV2JSON struct {
	Name    string `json:"name"`
	Acronym string `json:"acronym"`
	MIC     string `json:"mic"`
}

func newTickersListItem(t marketdata.Ticker) tickersListJSON {
	out := tickersListJSON{Name: t.Name, Ticker: t.Symbol, HasIntraday: t.HasIntraday, HasEOD: t.HasEOD}
	if t.Exchange != nil {
		out.StockExchange = &exchangeBriefV2JSON{Name: t.Exchange.Name, Acronym: t.Exchange.Acronym, MIC: t.Exchange.MIC}
	}
	return out
}

// splitV2JSON is a split of v2's /tickers/{symbol}/splits, which adds the
// ratio as text.
type splitV2JSON struct {
	Date        string  `json:"date"`
	SplitFactor float64 `json:"split_factor"`
	StockSplit  string  `json:"stock_split"`
	Symbol      string  `json:"symbol"`
}

// stockSplit writes a split factor as a ratio: 20 as "20:1", 0.1 as "1:10".
func stockSplit(f float64) string {
	if f >= 1 {
		return strconv.FormatFloat(f, 'f', -1, 64) + ":1"
	}
	return "1:" + strconv.FormatFloat(1/f, 'f', -1, 64)
}

// dividendV2JSON is a dividend of v2's /tickers/{symbol}/dividends, which
// adds dates and a frequency this service has no source for: null.
type dividendV2JSON struct {
	Date            string  `json:"date"`
	Dividend        float64 `json:"dividend"`
	PaymentDate     *string `json:"payment_date"`
	RecordDate      *string `json:"record_date"`
	DeclarationDate *string `json:"declaration_date"`
	DistrFreq       *string `json:"distr_freq"`
	Symbol          string  `json:"symbol"`
}
