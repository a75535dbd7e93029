package reads

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// intradaySymbolsSQL resolves the requested symbols in request order with
// their exchange and its time zone, and the ticker fields each bar repeats.
const intradaySymbolsSQL = `
SELECT t.symbol, coalesce(e.mic, ''), coalesce(nullif(e.timezone, ''), 'UTC'),
       t.name, t.asset_type, t.price_currency, coalesce(e.acronym, '')
FROM unnest($1::text[]) WITH ORDINALITY AS s(symbol, ord)
JOIN tickers t ON t.symbol = s.symbol
LEFT JOIN exchanges e ON e.mic = t.exchange_mic
ORDER BY s.ord`

// IntradaySQL aggregates 1-minute bars into buckets, in one statement:
//
//   - r: each symbol's bounds, an instant ($5, $7) or a calendar day of its
//     exchange ($6, $8), upper bound exclusive, cut to the interval's
//     longest span ($18): from the start when there is one, else back from
//     the symbol's last minute in range (one backward probe of the key).
//     For latest ($14) the range is cut to the four days before that
//     minute, which hold its last bucket of any interval (a weekend
//     included). So no query reads more than $18 of a symbol's minutes.
//   - m: the symbol's minutes in range, read by its primary key in each
//     monthly partition the range touches (runtime partition pruning),
//     with their local wall-clock time.
//   - f: the session close of the local day (early closes: $9..$11).
//   - g: buckets by date_bin on local time, with the origin at the session
//     open, so that 1hour buckets start at 09:30 in New York whatever the
//     UTC offset of the day; 24hour buckets are local calendar days. Bars
//     outside [open, close) are left out unless after_hours ($13).
//     open/close are the first and last minute's, by array_agg ordered.
//   - the page: by bucket start ($17 sort) and request order, joined to
//     the exact number of buckets of all symbols, so that a page past the
//     end still has one row, with the total alone.
//
// The bench runs this statement (docs/DATA.md).
const IntradaySQL = `
WITH s AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS s(symbol, tz, sopen, sclose, ord)
), r0 AS (
  SELECT s.*,
    coalesce($5::timestamptz, ($6::date)::timestamp AT TIME ZONE s.tz, '-infinity'::timestamptz) AS lo,
    coalesce($7::timestamptz + interval '1 microsecond', ($8::date + 1)::timestamp AT TIME ZONE s.tz, 'infinity'::timestamptz) AS hi
  FROM s
), r1 AS (
  SELECT r0.*, CASE WHEN $14 OR r0.lo = '-infinity' THEN (
      SELECT b.ts FROM intraday_bars b
      WHERE b.symbol = r0.symbol AND b.ts >= r0.lo AND b.ts < r0.hi ORDER BY b.ts DESC LIMIT 1) END AS last
  FROM r0
), r AS (
  SELECT r1.symbol, r1.tz, r1.sopen, r1.sclose, r1.ord,
    CASE WHEN $14 THEN greatest(r1.lo, r1.last - interval '4 days')
         WHEN r1.lo = '-infinity' THEN greatest(r1.lo, r1.last - $18::interval + interval '1 microsecond')
         ELSE r1.lo END AS lo,
    CASE WHEN $14 OR r1.lo = '-infinity' THEN r1.hi ELSE least(r1.hi, r1.lo + $18::interval) END AS hi
  FROM r1
), m AS (
  SELECT r.ord, r.symbol, r.tz, r.sopen, r.sclose, b.ts, b.open, b.high, b.low, b.close, b.volume,
         (b.ts AT TIME ZONE r.tz) AS lt
  FROM r CROSS JOIN LATERAL (
    SELECT * FROM intraday_bars b WHERE b.symbol = r.symbol AND b.ts >= r.lo AND b.ts < r.hi
  ) b
  WHERE r.lo IS NOT NULL
), f AS (
  SELECT m.*, (extract(hour FROM m.lt) * 60 + extract(minute FROM m.lt))::int AS lmin,
         coalesce(e.eclose, m.sclose) AS cl
  FROM m LEFT JOIN unnest($9::text[], $10::date[], $11::int[]) AS e(symbol, day, eclose)
    ON e.symbol = m.symbol AND e.day = m.lt::date
), g AS (
  SELECT ord, symbol, tz,
    CASE WHEN $12::int = 1440 THEN date_trunc('day', lt)
         ELSE date_bin(make_interval(mins => $12::int), lt, timestamp '2000-01-03 00:00' + make_interval(mins => sopen)) END AS bucket,
    (array_agg(open ORDER BY ts))[1] AS open, max(high) AS high, min(low) AS low,
    (array_agg(close ORDER BY ts DESC))[1] AS close, sum(volume) AS volume
  FROM f
  WHERE $13 OR (lmin >= sopen AND lmin < cl)
  GROUP BY ord, symbol, tz, sopen, 4
), h AS (
  SELECT g.*, (g.bucket AT TIME ZONE g.tz) AS start,
    row_number() OVER (PARTITION BY g.ord ORDER BY g.bucket DESC) AS rn
  FROM g
), p AS (
  SELECT * FROM h WHERE NOT $14 OR rn = 1
)
SELECT pg.symbol, pg.start, pg.open, pg.high, pg.low, pg.close, pg.volume, t.total
FROM (SELECT count(*) AS total FROM p) t
LEFT JOIN LATERAL (
  SELECT * FROM p
  ORDER BY CASE WHEN $17 THEN start END ASC, CASE WHEN NOT $17 THEN start END DESC, ord
  LIMIT $15 OFFSET $16
) pg ON true
ORDER BY CASE WHEN $17 THEN pg.start END ASC, CASE WHEN NOT $17 THEN pg.start END DESC, pg.ord`

// Intraday returns one page of q's buckets, aggregated from the 1-minute
// bars. Unknown symbols are left out; if none is known it returns
// marketdata.ErrNoValidSymbols.
func (s *Store) Intraday(ctx context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	rows, err := s.db.QueryContext(ctx, intradaySymbolsSQL, q.Symbols)
	if err != nil {
		return marketdata.IntradayPage{}, fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
	}
	var syms, zones []string
	var opens, closes []int32
	var eSyms []string
	var eDays []string
	var eCloses []int32
	heads := map[string]marketdata.IntradayBar{}
	known := 0
	for rows.Next() {
		var sym, mic, tz string
		var head marketdata.IntradayBar
		if err := rows.Scan(&sym, &mic, &tz, &head.Name, &head.AssetType, &head.PriceCurrency, &head.ExchangeCode); err != nil {
			rows.Close() // #nosec G104 -- best-effort close on a path that already returns the error
			return marketdata.IntradayPage{}, fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
		}
		known++
		if q.Exchange != "" && mic != q.Exchange {
			continue
		}
		sess := marketdata.SessionOf(mic)
		syms, zones = append(syms, sym), append(zones, tz)
		opens, closes = append(opens, int32(sess.Open)), append(closes, int32(sess.Close)) // #nosec G115 -- session open/close minutes of a day (0..1440) from the constant session table
		for d, c := range sess.EarlyCloses {
			eSyms, eDays, eCloses = append(eSyms, sym), append(eDays, d), append(eCloses, int32(c)) // #nosec G115 -- an early close in minutes of a day (0..1440) from the constant session table
		}
		head.Exchange = mic
		heads[sym] = head
	}
	rows.Close() // #nosec G104 -- the rows are read to the end; rows.Err below reports what failed
	if err := rows.Err(); err != nil {
		return marketdata.IntradayPage{}, fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
	}
	if known == 0 {
		return marketdata.IntradayPage{}, fmt.Errorf("intraday: %w", marketdata.ErrNoValidSymbols)
	}
	page := marketdata.IntradayPage{Bars: []marketdata.IntradayBar{}, Open: reachesNow(q, time.Now())}
	if len(syms) == 0 {
		return page, nil
	}
	interval := q.Interval
	if interval == 0 {
		interval = marketdata.DefaultInterval
	}
	var limit any // NULL: no limit
	if q.Limit > 0 {
		limit = q.Limit
	}
	span := fmt.Sprintf("%d seconds", int64(marketdata.MaxSpan(interval)/time.Second))
	args := []any{syms, zones, opens, closes, nullTime(q.From), nullDay(q.FromDay), nullTime(q.To), nullDay(q.ToDay),
		eSyms, eDays, eCloses, interval, q.AfterHours, q.Latest, limit, q.Offset, q.Sort == marketdata.SortAsc, span}
	if err := s.intradayPage(ctx, args, heads, &page); err != nil {
		return marketdata.IntradayPage{}, err
	}
	return page, nil
}

func (s *Store) intradayPage(ctx context.Context, args []any, heads map[string]marketdata.IntradayBar, page *marketdata.IntradayPage) error {
	rows, err := s.db.QueryContext(ctx, IntradaySQL, args...)
	if err != nil {
		return fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		// A page past the end is one row of NULLs but the total.
		var sym sql.NullString
		var date sql.NullTime
		var open, high, low, close, volume sql.NullFloat64
		if err := rows.Scan(&sym, &date, &open, &high, &low, &close, &volume, &page.Total); err != nil {
			return fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
		}
		if !sym.Valid {
			continue
		}
		b := heads[sym.String]
		b.Symbol, b.Date = sym.String, date.Time.UTC()
		b.Open, b.High, b.Low, b.Close, b.Volume = open.Float64, high.Float64, low.Float64, close.Float64, volume.Float64
		page.Bars = append(page.Bars, b)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("intraday: %w", marketdatadb.Translate(err))
	}
	return nil
}

// nullDay passes a calendar day as text, so that no session time zone can
// move it.
func nullDay(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Format(time.DateOnly)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// reachesNow reports whether q's range may hold a session still trading:
// its end is open or less than a day before now (a session is shorter
// than a day, in any zone).
func reachesNow(q marketdata.IntradayQuery, now time.Time) bool {
	switch {
	case !q.To.IsZero():
		return q.To.After(now.Add(-24 * time.Hour))
	case !q.ToDay.IsZero():
		// The day's end in the easternmost zone is at most 14 h after UTC's.
		return q.ToDay.Add(24*time.Hour + 14*time.Hour).After(now.Add(-24 * time.Hour))
	}
	return true
}
