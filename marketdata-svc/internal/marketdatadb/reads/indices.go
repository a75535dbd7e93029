package reads

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// indexWhere selects the indices that have a bar: $1 names one, or ” all.
const indexWhere = `WHERE t.asset_type = 'Index' AND ($1 = '' OR t.symbol = $1)
  AND EXISTS (SELECT 1 FROM eod_bars b WHERE b.symbol = t.symbol)`

// Indices returns a page of indices with the closes their changes are
// computed from. Each close is one backward step of the primary key of
// eod_bars from the latest date, so a page costs a few index probes per
// index whatever the history stored.
func (s *Store) Indices(ctx context.Context, q marketdata.IndexQuery) (marketdata.IndexPage, error) {
	quotes, total, err := countedPage(ctx, s.db, `SELECT count(*) FROM tickers t `+indexWhere, `SELECT `+tickerColumns+`,
       l.date, l.close,
       (SELECT b.close FROM eod_bars b WHERE b.symbol = t.symbol AND b.date < l.date ORDER BY b.date DESC LIMIT 1),
       (SELECT b.close FROM eod_bars b WHERE b.symbol = t.symbol AND b.date <= l.date - 7 ORDER BY b.date DESC LIMIT 1),
       (SELECT b.close FROM eod_bars b WHERE b.symbol = t.symbol AND b.date <= (l.date - interval '1 month')::date ORDER BY b.date DESC LIMIT 1),
       (SELECT b.close FROM eod_bars b WHERE b.symbol = t.symbol AND b.date <= (l.date - interval '1 year')::date ORDER BY b.date DESC LIMIT 1)
FROM tickers t LEFT JOIN exchanges e ON e.mic = t.exchange_mic
CROSS JOIN LATERAL (SELECT b.date, b.close FROM eod_bars b WHERE b.symbol = t.symbol ORDER BY b.date DESC LIMIT 1) l
`+indexWhere+`
ORDER BY t.symbol LIMIT $2 OFFSET $3`, []any{q.Symbol}, q.Limit, q.Offset, scanIndexQuote)
	if err != nil {
		return marketdata.IndexPage{}, fmt.Errorf("list indices: %w", err)
	}
	if q.Symbol != "" && len(quotes) == 0 {
		return marketdata.IndexPage{}, fmt.Errorf("list indices: %w", marketdata.ErrNotFound)
	}
	return marketdata.IndexPage{Indices: quotes, Total: total}, nil
}

func scanIndexQuote(sc scanner) (marketdata.IndexQuote, error) {
	var x marketdata.IndexQuote
	var prev, week, month, year sql.NullFloat64
	t, err := scanTicker(sc, &x.Date, &x.Close, &prev, &week, &month, &year)
	if err != nil {
		return x, err
	}
	x.Ticker = t
	x.Date = x.Date.UTC()
	for _, c := range []struct {
		from sql.NullFloat64
		to   **float64
	}{{prev, &x.Previous}, {week, &x.Week}, {month, &x.Month}, {year, &x.Year}} {
		if c.from.Valid {
			v := c.from.Float64
			*c.to = &v
		}
	}
	return x, nil
}
