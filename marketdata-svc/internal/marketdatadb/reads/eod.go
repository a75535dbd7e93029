package reads

import (
	"context"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/adjust"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// eodSymbolsSQL resolves the requested symbols in request order with the
// ticker fields that every bar repeats, and counts each symbol's bars in the
// range with an index-only scan of the primary key. Symbols off the
// requested exchange are kept (they are known) but count nothing. For
// latest ($5), a symbol counts at most one bar, so it stops at the first
// one: counting a whole history of 100 symbols to learn that each has a
// bar cost 241 ms at ten years a symbol (bench scale_eod_latest), and grew
// with every year kept.
const eodSymbolsSQL = `
SELECT t.symbol, t.name, t.asset_type, t.price_currency,
       coalesce(e.mic, ''), coalesce(e.acronym, ''),
       CASE WHEN $2 <> '' AND t.exchange_mic IS DISTINCT FROM $2 THEN -1
            WHEN $5 THEN (SELECT count(*) FROM (SELECT FROM eod_bars b WHERE b.symbol = t.symbol AND b.date BETWEEN $3 AND $4 LIMIT 1) one)
            ELSE (SELECT count(*) FROM eod_bars b WHERE b.symbol = t.symbol AND b.date BETWEEN $3 AND $4)
       END
FROM unnest($1::text[]) WITH ORDINALITY AS s(symbol, ord)
JOIN tickers t ON t.symbol = s.symbol
LEFT JOIN exchanges e ON e.mic = t.exchange_mic
ORDER BY s.ord`

// For each symbol, the PK is walked backwards (or forwards) and stops after
// limit+offset bars, since no page can reach further into one symbol; the
// few rows left are merged by date and request order. This reads
// symbols × (limit+offset) index entries however long the history is.
//
// Latest instead takes each symbol's most recent bar in the range, one
// backward index probe per symbol. Both fill eodLateralSQL: %[1]s is the
// order of the page, %[2]s the walk of one symbol, %[3]s the page's bound.
const eodLateralSQL = `
SELECT b.symbol, b.date, b.open, b.high, b.low, b.close, b.volume,
       b.split_factor, b.dividend, b.price_factor, b.volume_factor
FROM unnest($1::text[]) WITH ORDINALITY AS s(symbol, ord)
CROSS JOIN LATERAL (
  SELECT * FROM eod_bars b
  WHERE b.symbol = s.symbol AND b.date BETWEEN $2 AND $3
  %[2]s
) b
ORDER BY b.date %[1]s, s.ord
%[3]s`

var (
	eodPageDesc   = fmt.Sprintf(eodLateralSQL, "DESC", "ORDER BY b.date DESC\n  LIMIT $4", "LIMIT $5 OFFSET $6")
	eodPageAsc    = fmt.Sprintf(eodLateralSQL, "ASC", "ORDER BY b.date ASC\n  LIMIT $4", "LIMIT $5 OFFSET $6")
	eodLatestDesc = fmt.Sprintf(eodLateralSQL, "DESC", "ORDER BY b.date DESC\n  LIMIT 1", "LIMIT $4 OFFSET $5")
	eodLatestAsc  = fmt.Sprintf(eodLateralSQL, "ASC", "ORDER BY b.date DESC\n  LIMIT 1", "LIMIT $4 OFFSET $5")
)

// eodSkipSQL finds where a deep page starts: the date, in the page's
// order (%s), of the bar at offset $4, with how many bars come before that
// date. It counts the range's bars by date with the primary key alone,
// where the page walk would read every bar up to the offset in full and
// sort them.
const eodSkipSQL = `
SELECT date, before FROM (
  SELECT b.date, sum(count(*)) OVER (ORDER BY b.date %s) - count(*) AS before
  FROM eod_bars b WHERE b.symbol = ANY($1) AND b.date BETWEEN $2 AND $3
  GROUP BY b.date
) c WHERE before <= $4 ORDER BY before DESC LIMIT 1`

var (
	eodSkipAsc  = fmt.Sprintf(eodSkipSQL, "ASC")
	eodSkipDesc = fmt.Sprintf(eodSkipSQL, "DESC")
)

// eodDeepOffset is the offset from which a page starts at the date
// eodSkipSQL finds rather than walk every symbol's bars from the start.
const eodDeepOffset = 1000

type barMeta struct {
	name, assetType, currency, mic, acronym string
}

// EOD returns one page of bars of the known symbols of q, grouped by date
// (q.Sort, newest first by default) and by request order within a date.
// Unknown symbols are left out; if none is known it returns
// marketdata.ErrNoValidSymbols. A Limit of 0 or less means no limit.
func (s *Store) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	from, to := dateBound(q.DateFrom, false), dateBound(q.DateTo, true)
	rows, err := s.db.QueryContext(ctx, eodSymbolsSQL, q.Symbols, q.Exchange, from, to, q.Latest)
	if err != nil {
		return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
	}
	meta := make(map[string]barMeta, len(q.Symbols))
	symbols := make([]string, 0, len(q.Symbols))
	known := 0
	var total int64
	for rows.Next() {
		var sym string
		var m barMeta
		var n int64
		if err := rows.Scan(&sym, &m.name, &m.assetType, &m.currency, &m.mic, &m.acronym, &n); err != nil {
			rows.Close() // #nosec G104 -- best-effort close on a path that already returns the error
			return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
		}
		known++
		if n < 0 { // not on the requested exchange
			continue
		}
		total += n
		if n > 0 {
			meta[sym] = m
			symbols = append(symbols, sym)
		}
	}
	if err := rows.Err(); err != nil {
		return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
	}
	if known == 0 {
		return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdata.ErrNoValidSymbols)
	}
	page := marketdata.EODPage{Total: total}
	if total == 0 || int64(q.Offset) >= total {
		return page, nil
	}
	query := eodPageDesc
	switch {
	case q.Latest && q.Sort == marketdata.SortAsc:
		query = eodLatestAsc
	case q.Latest:
		query = eodLatestDesc
	case q.Sort == marketdata.SortAsc:
		query = eodPageAsc
	}
	offset := q.Offset
	if q.Limit > 0 && !q.Latest && offset >= eodDeepOffset {
		skip := eodSkipDesc
		if q.Sort == marketdata.SortAsc {
			skip = eodSkipAsc
		}
		var start time.Time
		var before int64
		if err := s.db.QueryRowContext(ctx, skip, symbols, from, to, offset).Scan(&start, &before); err != nil {
			return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
		}
		// The page starts on that date: the bars before it are skipped
		// by the range, the rest of the offset within the date.
		if q.Sort == marketdata.SortAsc {
			from = start
		} else {
			to = start
		}
		offset -= int(before)
	}
	var limit, perSymbol any // NULL: no limit
	if q.Limit > 0 {
		limit, perSymbol = q.Limit, q.Limit+offset
	}
	args := []any{symbols, from, to, perSymbol, limit, offset}
	if q.Latest {
		args = []any{symbols, from, to, limit, offset}
	}
	rows, err = s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	size := total - int64(q.Offset)
	if q.Limit > 0 && int64(q.Limit) < size {
		size = int64(q.Limit)
	}
	page.Bars = make([]marketdata.Bar, 0, size)
	for rows.Next() {
		var b marketdata.Bar
		var pf, vf float64
		if err := rows.Scan(&b.Symbol, &b.Date, &b.Open, &b.High, &b.Low, &b.Close, &b.Volume,
			&b.SplitFactor, &b.Dividend, &pf, &vf); err != nil {
			return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
		}
		b.AdjOpen, b.AdjHigh = adjust.Price(b.Open, pf), adjust.Price(b.High, pf)
		b.AdjLow, b.AdjClose = adjust.Price(b.Low, pf), adjust.Price(b.Close, pf)
		b.AdjVolume = adjust.Price(b.Volume, vf)
		m := meta[b.Symbol]
		b.Name, b.AssetType, b.PriceCurrency = m.name, m.assetType, m.currency
		b.Exchange, b.ExchangeCode = m.mic, m.acronym
		page.Bars = append(page.Bars, b)
	}
	if err := rows.Err(); err != nil {
		return marketdata.EODPage{}, fmt.Errorf("eod: %w", marketdatadb.Translate(err))
	}
	return page, nil
}
