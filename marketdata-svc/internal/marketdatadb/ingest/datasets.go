package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// DatasetLoad is one import of v2 reference datasets (commodities...),
// applied in one transaction: all of it or none. Rows are upserted by
// their key, so a re-import of the same file changes nothing.
type DatasetLoad struct {
	Commodities []marketdata.CommodityPrice
	Ratings     []marketdata.Rating
	Bonds       []marketdata.BondYield
	// ETFs are filings with all their holdings: each replaces the
	// holdings stored for its ticker and report date.
	ETFs []marketdata.ETFFilingHoldings
	// EDGAR are companies' SEC documents: a document given replaces the
	// company's, one not given (nil) is kept.
	EDGAR []marketdata.EDGARCompany
}

// DatasetResult says what a dataset load changed.
type DatasetResult struct {
	// Changed counts the rows inserted or updated to a new value.
	Changed int64
	// Version is the new data version, or 0 when nothing changed.
	Version int64
}

// changed reports whether the load changed any data.
func (r DatasetResult) changed() bool { return r.Changed > 0 }

// ApplyDatasets writes l in one transaction and, if anything changed,
// bumps the data version, which makes every cached answer over the
// datasets unreachable.
func (s *Store) ApplyDatasets(ctx context.Context, l DatasetLoad) (DatasetResult, error) {
	var out DatasetResult
	_, err := s.inLoadTx(ctx, "load datasets", func(ctx context.Context, tx pgx.Tx) (LoadResult, error) {
		for _, upsert := range []func(context.Context, pgx.Tx, DatasetLoad) (int64, error){upsertCommodities, upsertRatings, upsertBonds, upsertETFs, upsertEDGAR} {
			n, err := upsert(ctx, tx, l)
			if err != nil {
				return LoadResult{}, err
			}
			out.Changed += n
		}
		if !out.changed() {
			return LoadResult{}, nil
		}
		if err := tx.QueryRow(ctx, "UPDATE data_version SET version = version + 1 RETURNING version").Scan(&out.Version); err != nil {
			return LoadResult{}, marketdatadb.Translate(err)
		}
		return LoadResult{}, nil
	})
	if err != nil {
		return DatasetResult{}, err
	}
	return out, nil
}

// upsertRows runs upsert once per row, with the row's arguments, in one
// round trip, and counts the rows it inserted or changed.
func upsertRows[T any](ctx context.Context, tx pgx.Tx, what, upsert string, rows []T, args func(T) []any) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	var b pgx.Batch
	for _, r := range rows {
		b.Queue(upsert, args(r)...)
	}
	res := tx.SendBatch(ctx, &b)
	var n int64
	for range rows {
		tag, err := res.Exec()
		if err != nil {
			res.Close() // #nosec G104 -- the statement's error is the one returned
			return 0, fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
		}
		n += tag.RowsAffected()
	}
	if err := res.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
	}
	return n, nil
}

func upsertCommodities(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	return upsertRows(ctx, tx, "commodities", `
INSERT INTO commodity_prices AS c (name, unit, date, price) VALUES ($1, $2, $3, $4)
ON CONFLICT (name, date) DO UPDATE SET unit = EXCLUDED.unit, price = EXCLUDED.price
WHERE (c.unit, c.price) IS DISTINCT FROM (EXCLUDED.unit, EXCLUDED.price)`, l.Commodities,
		func(r marketdata.CommodityPrice) []any { return []any{r.Name, r.Unit, r.Date, r.Price} })
}

func upsertRatings(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	return upsertRows(ctx, tx, "ratings", `
INSERT INTO company_ratings AS r (symbol, analyst_firm, analyst_name, date, company_name, analyst_role, target_date, price_target, rated, conclusion)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (symbol, analyst_firm, analyst_name, date) DO UPDATE SET company_name = EXCLUDED.company_name,
  analyst_role = EXCLUDED.analyst_role, target_date = EXCLUDED.target_date, price_target = EXCLUDED.price_target,
  rated = EXCLUDED.rated, conclusion = EXCLUDED.conclusion
WHERE (r.company_name, r.analyst_role, r.target_date, r.price_target, r.rated, r.conclusion)
  IS DISTINCT FROM (EXCLUDED.company_name, EXCLUDED.analyst_role, EXCLUDED.target_date, EXCLUDED.price_target, EXCLUDED.rated, EXCLUDED.conclusion)`,
		l.Ratings, func(r marketdata.Rating) []any {
			return []any{r.Symbol, r.AnalystFirm, r.AnalystName, r.Date, r.CompanyName, r.AnalystRole, r.TargetDate, r.PriceTarget, r.Rated, r.Conclusion}
		})
}

func upsertBonds(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	return upsertRows(ctx, tx, "bonds", `
INSERT INTO bond_yields AS y (country, type, date, region, yield) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (country, type, date) DO UPDATE SET region = EXCLUDED.region, yield = EXCLUDED.yield
WHERE (y.region, y.yield) IS DISTINCT FROM (EXCLUDED.region, EXCLUDED.yield)`, l.Bonds,
		func(y marketdata.BondYield) []any { return []any{y.Country, y.Type, y.Date, y.Region, y.Yield} })
}

func upsertETFs(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	var changed int64
	for _, e := range l.ETFs {
		f := e.Filing
		tag, err := tx.Exec(ctx, `
INSERT INTO etf_filings AS f (ticker, report_date, period_start, fund_name, file_number, cik, reg_lei, series_name, series_id,
  series_lei, isin, final_filing, date_signed, name_of_applicant, signature, signer_name, signer_title)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
ON CONFLICT (ticker, report_date) DO UPDATE SET period_start = EXCLUDED.period_start, fund_name = EXCLUDED.fund_name,
  file_number = EXCLUDED.file_number, cik = EXCLUDED.cik, reg_lei = EXCLUDED.reg_lei, series_name = EXCLUDED.series_name,
  series_id = EXCLUDED.series_id, series_lei = EXCLUDED.series_lei, isin = EXCLUDED.isin, final_filing = EXCLUDED.final_filing,
  date_signed = EXCLUDED.date_signed, name_of_applicant = EXCLUDED.name_of_applicant, signature = EXCLUDED.signature,
  signer_name = EXCLUDED.signer_name, signer_title = EXCLUDED.signer_title
WHERE (f.period_start, f.fund_name, f.file_number, f.cik, f.reg_lei, f.series_name, f.series_id, f.series_lei, f.isin,
  f.final_filing, f.date_signed, f.name_of_applicant, f.signature, f.signer_name, f.signer_title)
  IS DISTINCT FROM (EXCLUDED.period_start, EXCLUDED.fund_name, EXCLUDED.file_number, EXCLUDED.cik, EXCLUDED.reg_lei,
  EXCLUDED.series_name, EXCLUDED.series_id, EXCLUDED.series_lei, EXCLUDED.isin, EXCLUDED.final_filing, EXCLUDED.date_signed,
  EXCLUDED.name_of_applicant, EXCLUDED.signature, EXCLUDED.signer_name, EXCLUDED.signer_title)`,
			f.Ticker, f.ReportDate, f.PeriodStart, f.FundName, f.FileNumber, f.CIK, f.RegLEI, f.SeriesName, f.SeriesID,
			f.SeriesLEI, f.ISIN, f.FinalFiling, f.DateSigned, f.NameOfApplicant, f.Signature, f.SignerName, f.SignerTitle)
		if err != nil {
			return 0, fmt.Errorf("etf %s %s: %w", f.Ticker, f.ReportDate.Format(time.DateOnly), marketdatadb.Translate(err))
		}
		changed += tag.RowsAffected()
		type position struct {
			n int
			h marketdata.ETFSecurity
		}
		held := make([]position, len(e.Holdings))
		for i, h := range e.Holdings {
			held[i] = position{i + 1, h}
		}
		n, err := upsertRows(ctx, tx, "etf "+f.Ticker+" holdings", `
INSERT INTO etf_holdings AS h (ticker, report_date, position, name, title, lei, isin, cusip, units, balance, currency, value_usd,
  percent_value, asset_category, issuer_category, payoff_profile, fair_value_level, invested_country, loan_by_fund,
  restricted_sec, cash_collateral, non_cash_collateral)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
ON CONFLICT (ticker, report_date, position) DO UPDATE SET name = EXCLUDED.name, title = EXCLUDED.title, lei = EXCLUDED.lei,
  isin = EXCLUDED.isin, cusip = EXCLUDED.cusip, units = EXCLUDED.units, balance = EXCLUDED.balance,
  currency = EXCLUDED.currency, value_usd = EXCLUDED.value_usd, percent_value = EXCLUDED.percent_value,
  asset_category = EXCLUDED.asset_category, issuer_category = EXCLUDED.issuer_category,
  payoff_profile = EXCLUDED.payoff_profile, fair_value_level = EXCLUDED.fair_value_level,
  invested_country = EXCLUDED.invested_country, loan_by_fund = EXCLUDED.loan_by_fund,
  restricted_sec = EXCLUDED.restricted_sec, cash_collateral = EXCLUDED.cash_collateral,
  non_cash_collateral = EXCLUDED.non_cash_collateral
WHERE (h.name, h.title, h.lei, h.isin, h.cusip, h.units, h.balance, h.currency, h.value_usd, h.percent_value,
  h.asset_category, h.issuer_category, h.payoff_profile, h.fair_value_level, h.invested_country, h.loan_by_fund,
  h.restricted_sec, h.cash_collateral, h.non_cash_collateral)
  IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.title, EXCLUDED.lei, EXCLUDED.isin, EXCLUDED.cusip, EXCLUDED.units,
  EXCLUDED.balance, EXCLUDED.currency, EXCLUDED.value_usd, EXCLUDED.percent_value, EXCLUDED.asset_category,
  EXCLUDED.issuer_category, EXCLUDED.payoff_profile, EXCLUDED.fair_value_level, EXCLUDED.invested_country,
  EXCLUDED.loan_by_fund, EXCLUDED.restricted_sec, EXCLUDED.cash_collateral, EXCLUDED.non_cash_collateral)`, held, func(p position) []any {
			h := p.h
			return []any{f.Ticker, f.ReportDate, p.n, h.Name, h.Title, h.LEI, h.ISIN, h.CUSIP, h.Units, h.Balance, h.Currency, h.ValueUSD,
				h.Percent, h.AssetCategory, h.IssuerCategory, h.PayoffProfile, h.FairValueLevel, h.InvestedCountry, h.LoanByFund,
				h.RestrictedSec, h.CashCollateral, h.NonCash}
		})
		if err != nil {
			return 0, err
		}
		changed += n
		// The filing's holdings are the load's: any stored past them go.
		tag, err = tx.Exec(ctx, `DELETE FROM etf_holdings WHERE ticker = $1 AND report_date = $2 AND position > $3`,
			f.Ticker, f.ReportDate, len(e.Holdings))
		if err != nil {
			return 0, fmt.Errorf("etf %s: %w", f.Ticker, marketdatadb.Translate(err))
		}
		changed += tag.RowsAffected()
	}
	return changed, nil
}

func upsertEDGAR(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	doc := func(d []byte) any {
		if d == nil {
			return nil
		}
		return string(d)
	}
	return upsertRows(ctx, tx, "edgar", `
INSERT INTO edgar_companies AS c (cik, name, submissions, facts) VALUES ($1, $2, $3::jsonb, $4::jsonb)
ON CONFLICT (cik) DO UPDATE SET name = EXCLUDED.name,
  submissions = coalesce(EXCLUDED.submissions, c.submissions), facts = coalesce(EXCLUDED.facts, c.facts)
WHERE (c.name, c.submissions, c.facts) IS DISTINCT FROM
  (EXCLUDED.name, coalesce(EXCLUDED.submissions, c.submissions), coalesce(EXCLUDED.facts, c.facts))`, l.EDGAR,
		func(c marketdata.EDGARCompany) []any { return []any{c.CIK, c.Name, doc(c.Submissions), doc(c.Facts)} })
}
