package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// DatasetKinds are the --kind values of marketstack v2's reference
// datasets. Like intraday, they are never detected from a header: each
// file says what it is by its --kind.
var DatasetKinds = []string{string(marketdata.DatasetCommodities), string(marketdata.DatasetRatings), string(marketdata.DatasetBonds), string(marketdata.DatasetETFs), string(marketdata.DatasetEDGAR)}

// IsDataset reports whether kind is one of DatasetKinds.
func IsDataset(kind string) bool { return slices.Contains(DatasetKinds, kind) }

// DatasetApplier applies a dataset load in one transaction;
// *ingest.Store is one.
type DatasetApplier interface {
	ApplyDatasets(ctx context.Context, l ingest.DatasetLoad) (ingest.DatasetResult, error)
}

// DatasetFileResult reports one imported dataset file.
type DatasetFileResult struct {
	Path    string
	Kind    string
	Rows    int
	Elapsed time.Duration
	Load    ingest.DatasetResult
}

// ImportDatasetFile imports one dataset file of kind in one transaction:
// on any error, a bad row included, nothing of the file is applied.
func ImportDatasetFile(ctx context.Context, store DatasetApplier, path, kind string) (DatasetFileResult, error) {
	start := time.Now()
	res := DatasetFileResult{Path: path, Kind: kind}
	f, err := os.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	load, rows, err := ReadDataset(path, f, kind)
	if err != nil {
		return res, err
	}
	if res.Load, err = store.ApplyDatasets(ctx, load); err != nil {
		return res, err
	}
	res.Rows, res.Elapsed = rows, time.Since(start)
	return res, nil
}

// ReadDataset reads a dataset file of kind from in (named name in
// errors) into a load, with its row count. Every bad row is reported as
// "name:line: reason".
func ReadDataset(name string, in io.Reader, kind string) (ingest.DatasetLoad, int, error) {
	var load ingest.DatasetLoad
	if marketdata.Dataset(kind) == marketdata.DatasetEDGAR {
		c, err := ReadEDGAR(name, in)
		load.EDGAR = []marketdata.EDGARCompany{c}
		return load, 1, err
	}
	t, err := readTableFrom(name, in)
	if err != nil {
		return load, 0, err
	}
	switch marketdata.Dataset(kind) {
	case marketdata.DatasetCommodities:
		load.Commodities, err = readCommodities(t)
		return load, len(load.Commodities), err
	case marketdata.DatasetRatings:
		load.Ratings, err = readRatings(t)
		return load, len(load.Ratings), err
	case marketdata.DatasetBonds:
		load.Bonds, err = readBonds(t)
		return load, len(load.Bonds), err
	case marketdata.DatasetETFs:
		var rows int
		load.ETFs, rows, err = readETFs(t)
		return load, rows, err
	}
	return load, 0, fmt.Errorf("unknown dataset kind %q (one of %s)", kind, strings.Join(DatasetKinds, ", "))
}

// maxNameLen bounds the names datasets key their rows by (a commodity, a
// country), as MaxSymbolLen bounds symbols.
const maxNameLen = 64

// keyLines finds rows given twice in one file: the second of a key is
// reported with the line of the first.
type keyLines map[string]int

func (k keyLines) seen(errs *RowErrors, path string, line int, key ...string) bool {
	s := strings.Join(key, "\x00")
	if first, ok := k[s]; ok {
		errs.add(path, line, "duplicate of line %d", first)
		return true
	}
	k[s] = line
	return false
}

// rowReader is what a dataset's row parser is given: the file's errors,
// its date parser (one layout per file) and the row's line.
type rowReader struct {
	t     *table
	errs  RowErrors
	dates dateParser
	line  int
}

// fail records the row's error and reports false, so a parser can return
// it.
func (r *rowReader) fail(format string, args ...any) bool {
	r.errs.add(r.t.path, r.line, format, args...)
	return false
}

// readRows parses every row of t with parse, which returns the row's
// value, its key (a key given twice is reported with the first's line)
// and whether the row is good; every bad row is reported.
func readRows[T any](t *table, parse func(r *rowReader, rec []string) (T, []string, bool)) ([]T, error) {
	r := &rowReader{t: t}
	keys := keyLines{}
	var out []T
	for i, rec := range t.rows {
		r.line = t.line[i]
		v, key, ok := parse(r, rec)
		if !ok || keys.seen(&r.errs, t.path, r.line, key...) {
			continue
		}
		out = append(out, v)
	}
	return out, r.errs.err()
}

// readCommodities reads commodity prices: commodity_name, commodity_unit
// (optional), date and price.
func readCommodities(t *table) ([]marketdata.CommodityPrice, error) {
	if err := errors.Join(t.require("commodityname", "commodity", "name"), t.require("date"),
		t.require("price", "commodityprice")); err != nil {
		return nil, err
	}
	return readRows(t, func(r *rowReader, rec []string) (marketdata.CommodityPrice, []string, bool) {
		p := marketdata.CommodityPrice{Name: strings.ToLower(t.field(rec, "commodityname", "commodity", "name")), Unit: t.field(rec, "commodityunit", "unit")}
		if p.Name == "" || len(p.Name) > maxNameLen {
			return p, nil, r.fail("commodity_name must have 1 to %d characters", maxNameLen)
		}
		var err error
		if p.Date, err = r.dates.parse(t.field(rec, "date")); err != nil {
			return p, nil, r.fail("%v", err)
		}
		if p.Price, err = parseNumber("price", t.field(rec, "price", "commodityprice")); err != nil {
			return p, nil, r.fail("%v", err)
		}
		return p, []string{p.Name, p.Date.Format(time.DateOnly)}, true
	})
}

// readRatings reads analyst ratings: ticker, company_name, analyst_name,
// analyst_firm, analyst_role, date_rating, target_date, price_target,
// rated (buy, hold or sell) and conclusion; target_date and price_target
// may be empty.
func readRatings(t *table) ([]marketdata.Rating, error) {
	if err := errors.Join(t.require("ticker", "symbol"), t.require("analystname"), t.require("analystfirm"),
		t.require("daterating", "date"), t.require("rated")); err != nil {
		return nil, err
	}
	return readRows(t, func(r *rowReader, rec []string) (marketdata.Rating, []string, bool) {
		x := marketdata.Rating{Symbol: normalizeSymbol(t.field(rec, "ticker", "symbol")), CompanyName: t.field(rec, "companyname"),
			AnalystName: t.field(rec, "analystname"), AnalystFirm: t.field(rec, "analystfirm"), AnalystRole: t.field(rec, "analystrole"),
			Rated: strings.ToLower(t.field(rec, "rated")), Conclusion: t.field(rec, "conclusion")}
		if _, err := marketdata.NormaliseSymbol(x.Symbol); err != nil {
			return x, nil, r.fail("ticker: %v", err)
		}
		if x.AnalystName == "" || x.AnalystFirm == "" {
			return x, nil, r.fail("analyst_name and analyst_firm are required")
		}
		if x.Rated != "buy" && x.Rated != "hold" && x.Rated != "sell" {
			return x, nil, r.fail("rated must be buy, hold or sell, not %q", x.Rated)
		}
		var err error
		if x.Date, err = r.dates.parse(t.field(rec, "daterating", "date")); err != nil {
			return x, nil, r.fail("%v", err)
		}
		if raw := t.field(rec, "targetdate"); raw != "" {
			d, err := r.dates.parse(raw)
			if err != nil {
				return x, nil, r.fail("target_date: %v", err)
			}
			x.TargetDate = &d
		}
		if raw := t.field(rec, "pricetarget"); raw != "" {
			v, err := parseNumber("price_target", raw)
			if err != nil {
				return x, nil, r.fail("%v", err)
			}
			x.PriceTarget = &v
		}
		return x, []string{x.Symbol, x.AnalystFirm, x.AnalystName, x.Date.Format(time.DateOnly)}, true
	})
}

// readBonds reads government bond yields: country, region (optional),
// type (the tenor, like 10Y), date and yield, in percent; a yield may be
// negative.
func readBonds(t *table) ([]marketdata.BondYield, error) {
	if err := errors.Join(t.require("country"), t.require("type", "tenor"), t.require("date"), t.require("yield")); err != nil {
		return nil, err
	}
	return readRows(t, func(r *rowReader, rec []string) (marketdata.BondYield, []string, bool) {
		y := marketdata.BondYield{Country: strings.ToLower(t.field(rec, "country")), Region: t.field(rec, "region"),
			Type: strings.ToUpper(t.field(rec, "type", "tenor"))}
		if y.Country == "" || len(y.Country) > maxNameLen {
			return y, nil, r.fail("country must have 1 to %d characters", maxNameLen)
		}
		if y.Type == "" || len(y.Type) > maxNameLen {
			return y, nil, r.fail("type must have 1 to %d characters", maxNameLen)
		}
		var err error
		if y.Date, err = r.dates.parse(t.field(rec, "date")); err != nil {
			return y, nil, r.fail("%v", err)
		}
		v, ok := signedNumber(t.field(rec, "yield"))
		if !ok || v == nil {
			return y, nil, r.fail("invalid yield %q", t.field(rec, "yield"))
		}
		y.Yield = *v
		return y, []string{y.Country, y.Type, y.Date.Format(time.DateOnly)}, true
	})
}

// signedNumber reads an optional number that may be negative: nil for an
// empty field, false for one that is not a finite number.
func signedNumber(raw string) (*float64, bool) {
	if raw == "" {
		return nil, true
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, false
	}
	return &v, true
}

// readETFs reads ETF holdings, one row per holding in the order reported,
// each with its filing's columns: ticker, report_date (the period's end),
// then optional fund and signature columns, taken from the filing's first
// row, and the holding's name and optional fields. Returns the filings
// and the row count.
func readETFs(t *table) ([]marketdata.ETFFilingHoldings, int, error) {
	if err := errors.Join(t.require("ticker"), t.require("reportdate", "endreportperiod"), t.require("name", "holdingname")); err != nil {
		return nil, 0, err
	}
	var out []marketdata.ETFFilingHoldings
	index := map[string]int{}
	var errs RowErrors
	var dates dateParser
	optionalDate := func(line int, name, col string) (*time.Time, bool) {
		raw := t.field(t.rows[line], col)
		if raw == "" {
			return nil, true
		}
		d, err := dates.parse(raw)
		if err != nil {
			errs.add(t.path, t.line[line], "%s: %v", name, err)
			return nil, false
		}
		return &d, true
	}
	optionalNumber := func(i int, name, col string) (*float64, bool) {
		raw := t.field(t.rows[i], col)
		v, ok := signedNumber(raw)
		if !ok {
			errs.add(t.path, t.line[i], "invalid %s %q", name, raw)
		}
		return v, ok
	}
	for i, rec := range t.rows {
		line := t.line[i]
		ticker := normalizeSymbol(t.field(rec, "ticker"))
		if _, err := marketdata.NormaliseSymbol(ticker); err != nil {
			errs.add(t.path, line, "ticker: %v", err)
			continue
		}
		report, err := dates.parse(t.field(rec, "reportdate", "endreportperiod"))
		if err != nil {
			errs.add(t.path, line, "report_date: %v", err)
			continue
		}
		h := marketdata.ETFSecurity{Name: t.field(rec, "name", "holdingname"), Title: t.field(rec, "title", "holdingtitle"),
			LEI: t.field(rec, "lei", "holdinglei"), ISIN: t.field(rec, "holdingisin"), CUSIP: t.field(rec, "cusip"),
			Units: t.field(rec, "units"), Currency: strings.ToUpper(t.field(rec, "currency")),
			AssetCategory: t.field(rec, "assetcategory"), IssuerCategory: t.field(rec, "issuercategory"),
			PayoffProfile: t.field(rec, "payoffprofile"), FairValueLevel: t.field(rec, "fairvaluelevel"),
			InvestedCountry: strings.ToUpper(t.field(rec, "investedcountry")), LoanByFund: t.field(rec, "loanbyfund"),
			RestrictedSec: t.field(rec, "restrictedsec"), CashCollateral: t.field(rec, "cashcollateral"),
			NonCash: t.field(rec, "noncashcollateral")}
		if h.Name == "" {
			errs.add(t.path, line, "empty holding name")
			continue
		}
		var ok [3]bool
		h.Balance, ok[0] = optionalNumber(i, "balance", "balance")
		h.ValueUSD, ok[1] = optionalNumber(i, "value_usd", "valueusd")
		h.Percent, ok[2] = optionalNumber(i, "percent_value", "percentvalue")
		if !ok[0] || !ok[1] || !ok[2] {
			continue
		}
		key := ticker + "\x00" + report.Format(time.DateOnly)
		at, seen := index[key]
		if !seen {
			f := marketdata.ETFFiling{Ticker: ticker, ReportDate: report, FundName: t.field(rec, "fundname"),
				FileNumber: t.field(rec, "filenumber"), CIK: t.field(rec, "cik"), RegLEI: t.field(rec, "reglei"),
				SeriesName: t.field(rec, "seriesname"), SeriesID: t.field(rec, "seriesid"), SeriesLEI: t.field(rec, "serieslei"),
				ISIN: t.field(rec, "isin"), NameOfApplicant: t.field(rec, "nameofapplicant"), Signature: t.field(rec, "signature"),
				SignerName: t.field(rec, "signername"), SignerTitle: t.field(rec, "signertitle")}
			switch strings.ToLower(t.field(rec, "finalfiling")) {
			case "", "false", "0", "no":
			case "true", "1", "yes":
				f.FinalFiling = true
			default:
				errs.add(t.path, line, "final_filing must be true or false")
				continue
			}
			var okStart, okSigned bool
			f.PeriodStart, okStart = optionalDate(i, "date_report_period", "datereportperiod")
			f.DateSigned, okSigned = optionalDate(i, "date_signed", "datesigned")
			if !okStart || !okSigned {
				continue
			}
			at = len(out)
			index[key] = at
			out = append(out, marketdata.ETFFilingHoldings{Filing: f})
		}
		out[at].Holdings = append(out[at].Holdings, h)
	}
	return out, len(t.rows), errs.err()
}
