package reads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// loadedDatasetsSQL probes each dataset's table for one row, in the order
// of marketdata.Datasets.
const loadedDatasetsSQL = `SELECT EXISTS (SELECT 1 FROM commodity_prices), EXISTS (SELECT 1 FROM company_ratings),
  EXISTS (SELECT 1 FROM bond_yields), EXISTS (SELECT 1 FROM etf_filings),
  EXISTS (SELECT 1 FROM edgar_companies)`

// LoadedDatasets tells which datasets hold a row: one index probe each.
func (s *Store) LoadedDatasets(ctx context.Context) (marketdata.LoadedDatasets, error) {
	has := make([]bool, len(marketdata.Datasets))
	dest := make([]any, len(has))
	for i := range has {
		dest[i] = &has[i]
	}
	if err := s.db.QueryRowContext(ctx, loadedDatasetsSQL).Scan(dest...); err != nil {
		return nil, fmt.Errorf("loaded datasets: %w", marketdatadb.Translate(err))
	}
	out := marketdata.LoadedDatasets{}
	for i, d := range marketdata.Datasets {
		out[d] = has[i]
	}
	return out, nil
}

// Commodity returns one commodity's prices, oldest first.
func (s *Store) Commodity(ctx context.Context, name string) (marketdata.CommoditySeries, error) {
	prices, err := allRows(ctx, s.db, "commodity "+name, `SELECT unit, date, price FROM commodity_prices WHERE name = $1 ORDER BY date`,
		[]any{name}, func(sc scanner) (marketdata.CommodityPrice, error) {
			p := marketdata.CommodityPrice{Name: name}
			err := sc.Scan(&p.Unit, &p.Date, &p.Price)
			p.Date = p.Date.UTC()
			return p, err
		})
	if err != nil {
		return marketdata.CommoditySeries{}, err
	}
	// The latest row's unit is the series'.
	return marketdata.CommoditySeries{Name: name, Unit: prices[len(prices)-1].Unit, Prices: prices}, nil
}

// allRows runs query and scans every row; none is marketdata.ErrNotFound,
// as the reads of one named item (a commodity, a company) answer it.
func allRows[T any](ctx context.Context, db *sql.DB, what, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", what, marketdata.ErrNotFound)
	}
	return out, nil
}

// CompanyRatings returns a symbol's ratings, newest first.
func (s *Store) CompanyRatings(ctx context.Context, symbol string) ([]marketdata.Rating, error) {
	return allRows(ctx, s.db, "company ratings of "+symbol, `
SELECT company_name, analyst_name, analyst_firm, analyst_role, date, target_date, price_target, rated, conclusion
FROM company_ratings WHERE symbol = $1
ORDER BY date DESC, analyst_firm, analyst_name`, []any{symbol}, func(sc scanner) (marketdata.Rating, error) {
		r := marketdata.Rating{Symbol: symbol}
		var target sql.NullTime
		var price sql.NullFloat64
		err := sc.Scan(&r.CompanyName, &r.AnalystName, &r.AnalystFirm, &r.AnalystRole, &r.Date, &target, &price, &r.Rated, &r.Conclusion)
		r.Date, r.TargetDate, r.PriceTarget = r.Date.UTC(), utcDate(target), nullFloat(price)
		return r, err
	})
}

// BondCountries returns a page of the countries with yields, by name.
func (s *Store) BondCountries(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return s.namePage(ctx, "bond countries", `SELECT count(DISTINCT country) FROM bond_yields`,
		`SELECT DISTINCT country FROM bond_yields ORDER BY country LIMIT $1 OFFSET $2`, p)
}

// namePage is page p of the names pageSQL lists, of which countSQL counts
// every one; label names the list in an error.
func (s *Store) namePage(ctx context.Context, label, countSQL, pageSQL string, p marketdata.ListPage) (marketdata.NamePage, error) {
	names, total, err := countedPage(ctx, s.db, countSQL, pageSQL, nil, p.Limit, p.Offset, func(sc scanner) (string, error) {
		var n string
		err := sc.Scan(&n)
		return n, err
	})
	if err != nil {
		return marketdata.NamePage{}, fmt.Errorf("%s: %w", label, err)
	}
	return marketdata.NamePage{Names: names, Total: total}, nil
}

// BondYields returns a country's yields, by tenor then date, oldest first.
func (s *Store) BondYields(ctx context.Context, country string) ([]marketdata.BondYield, error) {
	return allRows(ctx, s.db, "bond yields of "+country, `SELECT type, date, region, yield FROM bond_yields WHERE country = $1 ORDER BY type, date`,
		[]any{country}, func(sc scanner) (marketdata.BondYield, error) {
			y := marketdata.BondYield{Country: country}
			err := sc.Scan(&y.Type, &y.Date, &y.Region, &y.Yield)
			y.Date = y.Date.UTC()
			return y, err
		})
}

// ETFs returns a page of the tickers with filings, by ticker.
func (s *Store) ETFs(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return s.namePage(ctx, "etfs", `SELECT count(DISTINCT ticker) FROM etf_filings`,
		`SELECT DISTINCT ticker FROM etf_filings ORDER BY ticker LIMIT $1 OFFSET $2`, p)
}

// ETFHoldings returns the newest of q's filings with its holdings.
func (s *Store) ETFHoldings(ctx context.Context, q marketdata.ETFQuery) (marketdata.ETFFilingHoldings, error) {
	var out marketdata.ETFFilingHoldings
	f := &out.Filing
	var start, signed sql.NullTime
	err := s.db.QueryRowContext(ctx, `
SELECT ticker, report_date, period_start, fund_name, file_number, cik, reg_lei, series_name, series_id, series_lei, isin,
       final_filing, date_signed, name_of_applicant, signature, signer_name, signer_title
FROM etf_filings WHERE ticker = $1 AND report_date BETWEEN $2 AND $3
ORDER BY report_date DESC LIMIT 1`, q.Ticker, dateBound(q.From, false), dateBound(q.To, true)).Scan(
		&f.Ticker, &f.ReportDate, &start, &f.FundName, &f.FileNumber, &f.CIK, &f.RegLEI, &f.SeriesName, &f.SeriesID, &f.SeriesLEI,
		&f.ISIN, &f.FinalFiling, &signed, &f.NameOfApplicant, &f.Signature, &f.SignerName, &f.SignerTitle)
	if errors.Is(err, sql.ErrNoRows) {
		return out, fmt.Errorf("etf holdings of %q: %w", q.Ticker, marketdata.ErrNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("etf holdings: %w", marketdatadb.Translate(err))
	}
	f.ReportDate = f.ReportDate.UTC()
	f.PeriodStart, f.DateSigned = utcDate(start), utcDate(signed)
	out.Holdings, err = allRows(ctx, s.db, "etf holdings", `
SELECT name, title, lei, isin, cusip, units, balance, currency, value_usd, percent_value, asset_category, issuer_category,
       payoff_profile, fair_value_level, invested_country, loan_by_fund, restricted_sec, cash_collateral, non_cash_collateral
FROM etf_holdings WHERE ticker = $1 AND report_date = $2 ORDER BY position`, []any{f.Ticker, f.ReportDate},
		func(sc scanner) (marketdata.ETFSecurity, error) {
			var h marketdata.ETFSecurity
			var balance, value, pct sql.NullFloat64
			err := sc.Scan(&h.Name, &h.Title, &h.LEI, &h.ISIN, &h.CUSIP, &h.Units, &balance, &h.Currency, &value, &pct,
				&h.AssetCategory, &h.IssuerCategory, &h.PayoffProfile, &h.FairValueLevel, &h.InvestedCountry, &h.LoanByFund,
				&h.RestrictedSec, &h.CashCollateral, &h.NonCash)
			h.Balance, h.ValueUSD, h.Percent = nullFloat(balance), nullFloat(value), nullFloat(pct)
			return h, err
		})
	if errors.Is(err, marketdata.ErrNotFound) {
		return out, nil // a filing may report no holdings
	}
	return out, err
}

func utcDate(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func nullFloat(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}

// EDGARCompanies returns a page of the companies whose name contains
// q.Name, by name, with their submissions.
func (s *Store) EDGARCompanies(ctx context.Context, q marketdata.EDGARQuery) (marketdata.EDGARPage, error) {
	pattern := likePattern(q.Name)
	companies, total, err := countedPage(ctx, s.db, `SELECT count(*) FROM edgar_companies WHERE name ILIKE $1`,
		`SELECT cik, name, submissions FROM edgar_companies WHERE name ILIKE $1 ORDER BY name, cik LIMIT $2 OFFSET $3`,
		[]any{pattern}, q.Page.Limit, q.Page.Offset, func(sc scanner) (marketdata.EDGARCompany, error) {
			var c marketdata.EDGARCompany
			var sub []byte
			err := sc.Scan(&c.CIK, &c.Name, &sub)
			c.Submissions = sub
			return c, err
		})
	if err != nil {
		return marketdata.EDGARPage{}, fmt.Errorf("edgar companies: %w", err)
	}
	return marketdata.EDGARPage{Companies: companies, Total: total}, nil
}

// EDGARCompany returns one company's documents.
func (s *Store) EDGARCompany(ctx context.Context, cik string) (marketdata.EDGARCompany, error) {
	c := marketdata.EDGARCompany{CIK: cik}
	var sub, facts []byte
	err := s.db.QueryRowContext(ctx, `SELECT name, submissions, facts FROM edgar_companies WHERE cik = $1`, cik).Scan(&c.Name, &sub, &facts)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("edgar company %s: %w", cik, marketdata.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("edgar company: %w", marketdatadb.Translate(err))
	}
	c.Submissions, c.Facts = sub, facts
	return c, nil
}

// Frame returns q's facts across companies, by CIK.
func (s *Store) Frame(ctx context.Context, q marketdata.FrameQuery) ([]marketdata.FramePoint, error) {
	// jsonb paths: the facts are kept as SEC serves them (see the
	// migration), so a frame is read out of each company's document.
	return allRows(ctx, s.db, "frame "+q.Tag+" "+q.Frame, `
SELECT c.cik::bigint, coalesce(c.facts->>'entityName', c.name), coalesce(f->>'accn', ''), coalesce(f->>'end', ''), (f->>'val')::float8,
       coalesce(c.facts->'facts'->$1->$2->>'label', ''), coalesce(c.facts->'facts'->$1->$2->>'description', '')
FROM edgar_companies c, jsonb_array_elements(c.facts->'facts'->$1->$2->'units'->$3) AS f
WHERE f->>'frame' = $4 AND jsonb_typeof(f->'val') = 'number'
ORDER BY c.cik`, []any{q.Taxonomy, q.Tag, q.Unit, q.Frame}, func(sc scanner) (marketdata.FramePoint, error) {
		var p marketdata.FramePoint
		err := sc.Scan(&p.CIK, &p.EntityName, &p.Accn, &p.End, &p.Value, &p.Label, &p.Description)
		return p, err
	})
}
