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
		for _, upsert := range []func(context.Context, pgx.Tx, DatasetLoad) (int64, error){upsertCommodities, upsertRatings, upsertBonds} {
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

func upsertCommodities(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	rows := l.Commodities
	if len(rows) == 0 {
		return 0, nil
	}
	names, units := make([]string, len(rows)), make([]string, len(rows))
	dates, prices := make([]time.Time, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		names[i], units[i], dates[i], prices[i] = r.Name, r.Unit, r.Date, r.Price
	}
	tag, err := tx.Exec(ctx, `
INSERT INTO commodity_prices AS c (name, unit, date, price)
SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::float8[])
ON CONFLICT (name, date) DO UPDATE SET unit = EXCLUDED.unit, price = EXCLUDED.price
WHERE (c.unit, c.price) IS DISTINCT FROM (EXCLUDED.unit, EXCLUDED.price)`, names, units, dates, prices)
	if err != nil {
		return 0, fmt.Errorf("commodities: %w", marketdatadb.Translate(err))
	}
	return tag.RowsAffected(), nil
}

func upsertRatings(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	if len(l.Ratings) == 0 {
		return 0, nil
	}
	n := len(l.Ratings)
	syms, firms, names, companies, roles := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	rated, conclusions := make([]string, n), make([]string, n)
	dates, targets := make([]time.Time, n), make([]*time.Time, n)
	prices := make([]*float64, n)
	for i, r := range l.Ratings {
		syms[i], firms[i], names[i], companies[i], roles[i] = r.Symbol, r.AnalystFirm, r.AnalystName, r.CompanyName, r.AnalystRole
		rated[i], conclusions[i], dates[i], targets[i], prices[i] = r.Rated, r.Conclusion, r.Date, r.TargetDate, r.PriceTarget
	}
	tag, err := tx.Exec(ctx, `
INSERT INTO company_ratings AS r (symbol, analyst_firm, analyst_name, date, company_name, analyst_role, target_date, price_target, rated, conclusion)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::text[], $6::text[], $7::date[], $8::float8[], $9::text[], $10::text[])
ON CONFLICT (symbol, analyst_firm, analyst_name, date) DO UPDATE SET company_name = EXCLUDED.company_name,
  analyst_role = EXCLUDED.analyst_role, target_date = EXCLUDED.target_date, price_target = EXCLUDED.price_target,
  rated = EXCLUDED.rated, conclusion = EXCLUDED.conclusion
WHERE (r.company_name, r.analyst_role, r.target_date, r.price_target, r.rated, r.conclusion)
  IS DISTINCT FROM (EXCLUDED.company_name, EXCLUDED.analyst_role, EXCLUDED.target_date, EXCLUDED.price_target, EXCLUDED.rated, EXCLUDED.conclusion)`,
		syms, firms, names, dates, companies, roles, targets, prices, rated, conclusions)
	if err != nil {
		return 0, fmt.Errorf("ratings: %w", marketdatadb.Translate(err))
	}
	return tag.RowsAffected(), nil
}

func upsertBonds(ctx context.Context, tx pgx.Tx, l DatasetLoad) (int64, error) {
	if len(l.Bonds) == 0 {
		return 0, nil
	}
	n := len(l.Bonds)
	countries, types, regions := make([]string, n), make([]string, n), make([]string, n)
	dates, yields := make([]time.Time, n), make([]float64, n)
	for i, y := range l.Bonds {
		countries[i], types[i], regions[i], dates[i], yields[i] = y.Country, y.Type, y.Region, y.Date, y.Yield
	}
	tag, err := tx.Exec(ctx, `
INSERT INTO bond_yields AS y (country, type, date, region, yield)
SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::text[], $5::float8[])
ON CONFLICT (country, type, date) DO UPDATE SET region = EXCLUDED.region, yield = EXCLUDED.yield
WHERE (y.region, y.yield) IS DISTINCT FROM (EXCLUDED.region, EXCLUDED.yield)`, countries, types, dates, regions, yields)
	if err != nil {
		return 0, fmt.Errorf("bonds: %w", marketdatadb.Translate(err))
	}
	return tag.RowsAffected(), nil
}
