// Package demo holds the bundled demo dataset: three real daily price
// series (see data/README.md for their source and licence), metadata of the
// main stock exchanges, the demo tickers, real splits and a dividend as
// facts, and synthetic 1-minute bars of GOOG's and MSFT's last trading days,
// generated to agree with their daily bars. Load applies all of it,
// idempotently.
package demo

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

//go:embed data/*.csv data/*.json data/README.md
var files embed.FS

// Series are the bundled price files and the symbols they load as.
var Series = []struct{ File, Symbol string }{
	{"data/goog-2004-2008.csv", "GOOG"},
	{"data/msft-2003.csv", "MSFT"},
	{"data/sp500-2000-2020.csv", "GSPC.INDX"},
}

// Exchanges are the main stock exchanges, by marketstack's code (the ISO
// 10383 MIC but for Xetra, which marketstack calls XETRA), plus the INDX
// pseudo-exchange on which marketstack lists indices.
var Exchanges = []marketdata.Exchange{
	{MIC: "XNAS", Name: "NASDAQ Stock Exchange", Acronym: "NASDAQ", CountryCode: "US", Country: "USA", City: "New York", Website: "www.nasdaq.com", Timezone: "America/New_York", Currency: "USD"},
	{MIC: "XNYS", Name: "New York Stock Exchange", Acronym: "NYSE", CountryCode: "US", Country: "USA", City: "New York", Website: "www.nyse.com", Timezone: "America/New_York", Currency: "USD"},
	{MIC: "XLON", Name: "London Stock Exchange", Acronym: "LSE", CountryCode: "GB", Country: "United Kingdom", City: "London", Website: "www.londonstockexchange.com", Timezone: "Europe/London", Currency: "GBP"},
	{MIC: "XTKS", Name: "Tokyo Stock Exchange", Acronym: "TSE", CountryCode: "JP", Country: "Japan", City: "Tokyo", Website: "www.jpx.co.jp", Timezone: "Asia/Tokyo", Currency: "JPY"},
	{MIC: "XPAR", Name: "Euronext Paris", Acronym: "Euronext", CountryCode: "FR", Country: "France", City: "Paris", Website: "www.euronext.com", Timezone: "Europe/Paris", Currency: "EUR"},
	{MIC: "XAMS", Name: "Euronext Amsterdam", Acronym: "Euronext", CountryCode: "NL", Country: "Netherlands", City: "Amsterdam", Website: "www.euronext.com", Timezone: "Europe/Amsterdam", Currency: "EUR"},
	{MIC: "XETRA", Name: "Deutsche Börse Xetra", Acronym: "XETRA", CountryCode: "DE", Country: "Germany", City: "Frankfurt", Website: "www.xetra.com", Timezone: "Europe/Berlin", Currency: "EUR"},
	{MIC: "XSWX", Name: "SIX Swiss Exchange", Acronym: "SIX", CountryCode: "CH", Country: "Switzerland", City: "Zurich", Website: "www.six-group.com", Timezone: "Europe/Zurich", Currency: "CHF"},
	{MIC: "XSTO", Name: "Nasdaq Stockholm", Acronym: "OMX", CountryCode: "SE", Country: "Sweden", City: "Stockholm", Website: "www.nasdaq.com/european-market-activity", Timezone: "Europe/Stockholm", Currency: "SEK"},
	{MIC: "XASX", Name: "Australian Securities Exchange", Acronym: "ASX", CountryCode: "AU", Country: "Australia", City: "Sydney", Website: "www.asx.com.au", Timezone: "Australia/Sydney", Currency: "AUD"},
	{MIC: "XHKG", Name: "Hong Kong Stock Exchange", Acronym: "HKEX", CountryCode: "HK", Country: "Hong Kong", City: "Hong Kong", Website: "www.hkex.com.hk", Timezone: "Asia/Hong_Kong", Currency: "HKD"},
	{MIC: "XSHG", Name: "Shanghai Stock Exchange", Acronym: "SSE", CountryCode: "CN", Country: "China", City: "Shanghai", Website: "www.sse.com.cn", Timezone: "Asia/Shanghai", Currency: "CNY"},
	{MIC: "XSHE", Name: "Shenzhen Stock Exchange", Acronym: "SZSE", CountryCode: "CN", Country: "China", City: "Shenzhen", Website: "www.szse.cn", Timezone: "Asia/Shanghai", Currency: "CNY"},
	{MIC: "XNSE", Name: "National Stock Exchange of India", Acronym: "NSE", CountryCode: "IN", Country: "India", City: "Mumbai", Website: "www.nseindia.com", Timezone: "Asia/Kolkata", Currency: "INR"},
	{MIC: "XBOM", Name: "BSE (Bombay Stock Exchange)", Acronym: "BSE", CountryCode: "IN", Country: "India", City: "Mumbai", Website: "www.bseindia.com", Timezone: "Asia/Kolkata", Currency: "INR"},
	{MIC: "XKRX", Name: "Korea Exchange", Acronym: "KRX", CountryCode: "KR", Country: "South Korea", City: "Seoul", Website: "www.krx.co.kr", Timezone: "Asia/Seoul", Currency: "KRW"},
	{MIC: "XTSE", Name: "Toronto Stock Exchange", Acronym: "TSX", CountryCode: "CA", Country: "Canada", City: "Toronto", Website: "www.tsx.com", Timezone: "America/Toronto", Currency: "CAD"},
	{MIC: "INDX", Name: "Indices", Acronym: "INDX", Timezone: "America/New_York", Currency: "USD"},
}

// Tickers are the demo's instruments: the three series, and companies
// whose real splits are loaded as facts (without prices).
var Tickers = []ingest.TickerRow{
	{Symbol: "GOOG", Name: "Alphabet Inc. Class C", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS", HasIntraday: true},
	{Symbol: "MSFT", Name: "Microsoft Corporation", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS", HasIntraday: true},
	{Symbol: "GSPC.INDX", Name: "S&P 500 Index", AssetType: "Index", PriceCurrency: "USD", ExchangeMIC: "INDX"},
	{Symbol: "AAPL", Name: "Apple Inc.", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
	{Symbol: "TSLA", Name: "Tesla, Inc.", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
	{Symbol: "NVDA", Name: "NVIDIA Corporation", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
	{Symbol: "AMZN", Name: "Amazon.com, Inc.", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
	{Symbol: "GOOGL", Name: "Alphabet Inc. Class A", AssetType: "Stock", PriceCurrency: "USD", ExchangeMIC: "XNAS"},
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Splits are real splits with their ex-dates (data/README.md). GOOG's two
// come after its bundled series ends, so they adjust all of it, as
// marketstack adjusts for every later action.
var Splits = []marketdata.Split{
	{Symbol: "GOOG", Date: day("2014-03-27"), Factor: 2.002},
	{Symbol: "GOOG", Date: day("2022-07-18"), Factor: 20},
	{Symbol: "AAPL", Date: day("2020-08-31"), Factor: 4},
	{Symbol: "TSLA", Date: day("2020-08-31"), Factor: 5},
	{Symbol: "TSLA", Date: day("2022-08-25"), Factor: 3},
	{Symbol: "NVDA", Date: day("2021-07-20"), Factor: 4},
	{Symbol: "NVDA", Date: day("2024-06-10"), Factor: 10},
	{Symbol: "AMZN", Date: day("2022-06-06"), Factor: 20},
	{Symbol: "GOOGL", Date: day("2022-07-18"), Factor: 20},
}

// Dividends are MSFT's dividend that its bundled file's "Adj. Close"
// accounts for: $0.16 ex 2003-10-15, with the file's own ratio of adjusted
// to raw close (29.79 / 29.96 on 2003-09-19), because the close before the
// ex-date lies after the series ends (data/README.md).
var Dividends = []marketdata.Dividend{
	{Symbol: "MSFT", Date: day("2003-10-15"), Amount: 0.16, Ratio: 29.79 / 29.96},
}

// Load applies the whole demo dataset: the daily data in one transaction,
// then the synthetic minute bars of IntradaySeries in another. Loading it
// again changes nothing. The result is the daily load's, with the data
// version of whichever load changed data last.
func Load(ctx context.Context, store Store) (ingest.LoadResult, error) {
	load := ingest.Load{
		Exchanges: Exchanges,
		Tickers:   Tickers,
		Splits:    Splits,
		Dividends: Dividends,
		Bars: func() (ingest.BarSource, error) {
			var srcs []*importer.PriceFile
			for _, s := range Series {
				p, err := openSeries(s.File, s.Symbol)
				if err != nil {
					return nil, err
				}
				srcs = append(srcs, p)
			}
			return &chain{srcs: srcs}, nil
		},
	}
	res, err := store.Apply(ctx, load)
	if err != nil {
		return res, fmt.Errorf("load demo: %w", err)
	}
	ires, err := loadIntraday(ctx, store)
	if err != nil {
		return res, err
	}
	if ires.Changed() {
		res.Version = ires.Version
	}
	dres, err := loadDatasets(ctx, store)
	if err != nil {
		return res, err
	}
	if dres.Version != 0 {
		res.Version = dres.Version
	}
	return res, nil
}

// DatasetFiles are the bundled samples of the v2 datasets by import kind,
// read as `import --kind` reads a file (docs/DATA.md says which are
// synthetic).
var DatasetFiles = []struct{ File, Kind string }{
	{"data/commodities-synthetic.csv", "commodities"},
	{"data/ratings-synthetic.csv", "ratings"},
	{"data/bonds-synthetic.csv", "bonds"},
	{"data/etfs-synthetic.csv", "etfs"},
	{"data/edgar-submissions-synthetic.json", "edgar"},
	{"data/edgar-companyfacts-synthetic.json", "edgar"},
	{"data/edgar-companyfacts-2-synthetic.json", "edgar"},
}

// loadDatasets loads every bundled dataset sample in one transaction.
func loadDatasets(ctx context.Context, store importer.DatasetApplier) (ingest.DatasetResult, error) {
	var all ingest.DatasetLoad
	for _, d := range DatasetFiles {
		f, err := files.Open(d.File)
		if err != nil {
			return ingest.DatasetResult{}, err
		}
		l, _, err := importer.ReadDataset(d.File, f, d.Kind)
		_ = f.Close()
		if err != nil {
			return ingest.DatasetResult{}, fmt.Errorf("load demo %s: %w", d.File, err)
		}
		all.Commodities = append(all.Commodities, l.Commodities...)
		all.Ratings = append(all.Ratings, l.Ratings...)
		all.Bonds = append(all.Bonds, l.Bonds...)
		all.ETFs = append(all.ETFs, l.ETFs...)
		all.EDGAR = append(all.EDGAR, l.EDGAR...)
	}
	res, err := store.ApplyDatasets(ctx, all)
	if err != nil {
		return res, fmt.Errorf("load demo datasets: %w", err)
	}
	return res, nil
}

// openSeries opens the bundled price file name, as symbol.
func openSeries(name, symbol string) (*importer.PriceFile, error) {
	f, err := files.Open(name)
	if err != nil {
		return nil, err
	}
	p, err := importer.NewPrices(name, f, symbol)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return p, nil
}

// chain streams several price files one after the other.
type chain struct {
	srcs []*importer.PriceFile
	i    int
}

func (c *chain) Next() bool {
	for c.i < len(c.srcs) {
		if c.srcs[c.i].Next() {
			return true
		}
		if c.srcs[c.i].Err() != nil {
			return false
		}
		c.i++
	}
	return false
}

func (c *chain) Bar() ingest.BarRow { return c.srcs[c.i].Bar() }

func (c *chain) Err() error {
	if c.i < len(c.srcs) {
		return c.srcs[c.i].Err()
	}
	return nil
}
