package reads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

const tickerColumns = `t.symbol, t.name, t.asset_type, t.price_currency, t.has_intraday, t.has_eod, coalesce(t.country, ''),
       e.mic, e.name, e.acronym, e.country_code, e.country, e.city, e.website, e.timezone, e.currency`

const exchangeColumns = `mic, name, acronym, country_code, country, city, website, timezone, currency`

// limitArg turns a page limit into a LIMIT parameter; NULL means no limit.
func limitArg(limit int) any {
	if limit > 0 {
		return limit
	}
	return nil
}

// likePattern makes a substring pattern for ILIKE from user text, escaping
// LIKE's metacharacters so they match literally.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

type scanner interface{ Scan(dest ...any) error }

// scanTicker reads tickerColumns and then, into extra, any columns a
// query selects after them.
func scanTicker(sc scanner, extra ...any) (marketdata.Ticker, error) {
	var t marketdata.Ticker
	var mic, name, acronym, cc, country, city, website, tz, cur sql.NullString
	if err := sc.Scan(append([]any{&t.Symbol, &t.Name, &t.AssetType, &t.PriceCurrency, &t.HasIntraday, &t.HasEOD, &t.Country,
		&mic, &name, &acronym, &cc, &country, &city, &website, &tz, &cur}, extra...)...); err != nil {
		return marketdata.Ticker{}, err
	}
	if mic.Valid {
		t.Exchange = &marketdata.Exchange{MIC: mic.String, Name: name.String, Acronym: acronym.String,
			CountryCode: cc.String, Country: country.String, City: city.String, Website: website.String,
			Timezone: tz.String, Currency: cur.String}
	}
	return t, nil
}

func scanExchange(sc scanner) (marketdata.Exchange, error) {
	var e marketdata.Exchange
	err := sc.Scan(&e.MIC, &e.Name, &e.Acronym, &e.CountryCode, &e.Country, &e.City, &e.Website, &e.Timezone, &e.Currency)
	return e, err
}

// Tickers returns a page of tickers: the known ones among q.Symbols in
// request order (marketdata.ErrNoValidSymbols when none is known), or else
// those matching q.Search in symbol or name, by symbol; q.Exchange filters
// by MIC in both cases.
func (s *Store) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	if len(q.Symbols) > 0 {
		return s.tickersBySymbols(ctx, q)
	}
	if q.Search == "" {
		return s.tickerListing(ctx, q)
	}
	where := `WHERE ($1 = '' OR t.exchange_mic = $1)
	  AND ($2 = '' OR t.symbol ILIKE $3 OR t.name ILIKE $3)`
	args := []any{q.Exchange, q.Search, likePattern(q.Search)}
	tickers, total, err := countedPage(ctx, s.db, `SELECT count(*) FROM tickers t `+where, `SELECT `+tickerColumns+`
FROM tickers t LEFT JOIN exchanges e ON e.mic = t.exchange_mic `+where+`
ORDER BY t.symbol LIMIT $4 OFFSET $5`, args, q.Limit, q.Offset, func(sc scanner) (marketdata.Ticker, error) { return scanTicker(sc) })
	if err != nil {
		return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", err)
	}
	return marketdata.TickerPage{Tickers: tickers, Total: total}, nil
}

// tickerListing is a page of every ticker, or of one exchange's, by
// symbol. The page's symbols are found first on an index alone (the
// primary key, or (exchange_mic, symbol)), and only its rows are read: a
// deep offset skips index entries instead of reading and dropping rows,
// and the statement names only the conditions it has, so that a generic
// plan cannot fall back to reading the whole table for an "either" it
// cannot decide ($1 = ” OR ...). Offset 10,000 of an exchange of 34,000
// tickers cost 9 times offset 0 the other way (bench
// scale_exchange_tickers, 170,000 tickers).
func (s *Store) tickerListing(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	where, args, n := "", []any{}, 1
	if q.Exchange != "" {
		where, args, n = "WHERE exchange_mic = $1", []any{q.Exchange}, 2
	}
	tickers, total, err := countedPage(ctx, s.db, `SELECT count(*) FROM tickers `+where, fmt.Sprintf(`SELECT `+tickerColumns+`
FROM (SELECT symbol FROM tickers %s ORDER BY symbol LIMIT $%d OFFSET $%d) AS p
JOIN tickers t USING (symbol) LEFT JOIN exchanges e ON e.mic = t.exchange_mic
ORDER BY t.symbol`, where, n, n+1), args, q.Limit, q.Offset, func(sc scanner) (marketdata.Ticker, error) { return scanTicker(sc) })
	if err != nil {
		return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", err)
	}
	return marketdata.TickerPage{Tickers: tickers, Total: total}, nil
}

func (s *Store) tickersBySymbols(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tickerColumns+`, ($2 = '' OR t.exchange_mic = $2)
FROM unnest($1::text[]) WITH ORDINALITY AS s(symbol, ord)
JOIN tickers t ON t.symbol = s.symbol
LEFT JOIN exchanges e ON e.mic = t.exchange_mic
ORDER BY s.ord`, q.Symbols, q.Exchange)
	if err != nil {
		return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	var all []marketdata.Ticker
	known := 0
	for rows.Next() {
		var onExchange bool
		t, err := scanTicker(rows, &onExchange)
		if err != nil {
			return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", marketdatadb.Translate(err))
		}
		known++
		if onExchange {
			all = append(all, t)
		}
	}
	if err := rows.Err(); err != nil {
		return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", marketdatadb.Translate(err))
	}
	if known == 0 {
		return marketdata.TickerPage{}, fmt.Errorf("list tickers: %w", marketdata.ErrNoValidSymbols)
	}
	return marketdata.TickerPage{Tickers: pageOf(all, q.Limit, q.Offset), Total: int64(len(all))}, nil
}

func pageOf[T any](all []T, limit, offset int) []T {
	if offset >= len(all) {
		return nil
	}
	all = all[offset:]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all
}

// Ticker returns one ticker, or marketdata.ErrNotFound.
func (s *Store) Ticker(ctx context.Context, symbol string) (marketdata.Ticker, error) {
	t, err := scanTicker(s.db.QueryRowContext(ctx, `SELECT `+tickerColumns+`
FROM tickers t LEFT JOIN exchanges e ON e.mic = t.exchange_mic WHERE t.symbol = $1`, symbol))
	if errors.Is(err, sql.ErrNoRows) {
		return marketdata.Ticker{}, fmt.Errorf("get ticker: %w", marketdata.ErrNotFound)
	}
	if err != nil {
		return marketdata.Ticker{}, fmt.Errorf("get ticker: %w", marketdatadb.Translate(err))
	}
	return t, nil
}

// Exchanges returns a page of exchanges by MIC, optionally matching
// q.Search in MIC, name, acronym, country or city.
func (s *Store) Exchanges(ctx context.Context, q marketdata.ExchangeQuery) (marketdata.ExchangePage, error) {
	where := `WHERE $1 = '' OR mic ILIKE $2 OR name ILIKE $2 OR acronym ILIKE $2 OR country ILIKE $2 OR city ILIKE $2`
	args := []any{q.Search, likePattern(q.Search)}
	exchanges, total, err := countedPage(ctx, s.db, `SELECT count(*) FROM exchanges `+where, `SELECT `+exchangeColumns+` FROM exchanges `+where+`
ORDER BY mic LIMIT $3 OFFSET $4`, args, q.Limit, q.Offset, scanExchange)
	if err != nil {
		return marketdata.ExchangePage{}, fmt.Errorf("list exchanges: %w", err)
	}
	return marketdata.ExchangePage{Exchanges: exchanges, Total: total}, nil
}

// Exchange returns one exchange by MIC, or marketdata.ErrNotFound.
func (s *Store) Exchange(ctx context.Context, mic string) (marketdata.Exchange, error) {
	e, err := scanExchange(s.db.QueryRowContext(ctx, `SELECT `+exchangeColumns+` FROM exchanges WHERE mic = $1`, mic))
	if errors.Is(err, sql.ErrNoRows) {
		return marketdata.Exchange{}, fmt.Errorf("get exchange: %w", marketdata.ErrNotFound)
	}
	if err != nil {
		return marketdata.Exchange{}, fmt.Errorf("get exchange: %w", marketdatadb.Translate(err))
	}
	return e, nil
}

// actionSQL builds the count and page queries over splits or dividends.
// With symbols, only known symbols count and the order within a date is the
// request order; without, all symbols in symbol order.
func actionSQL(table, value string, bySymbols bool, sort marketdata.SortOrder) (count, page string) {
	dir := "DESC"
	if sort == marketdata.SortAsc {
		dir = "ASC"
	}
	if bySymbols {
		from := ` FROM unnest($1::text[]) WITH ORDINALITY AS s(symbol, ord) JOIN ` + table + ` a ON a.symbol = s.symbol
WHERE a.date BETWEEN $2 AND $3`
		return `SELECT count(*)` + from,
			`SELECT a.symbol, a.date, a.` + value + from + ` ORDER BY a.date ` + dir + `, s.ord LIMIT $4 OFFSET $5`
	}
	from := ` FROM ` + table + ` a WHERE $1::text[] IS NULL AND a.date BETWEEN $2 AND $3`
	return `SELECT count(*)` + from,
		`SELECT a.symbol, a.date, a.` + value + from + ` ORDER BY a.date ` + dir + `, a.symbol LIMIT $4 OFFSET $5`
}

// Splits returns a page of splits by ex-date (q.Sort, newest first by
// default).
func (s *Store) Splits(ctx context.Context, q marketdata.ActionQuery) (marketdata.SplitPage, error) {
	splits, total, err := actions(ctx, s, "splits", "factor", q, func(symbol string, date time.Time, factor float64) marketdata.Split {
		return marketdata.Split{Symbol: symbol, Date: date, Factor: factor}
	})
	return marketdata.SplitPage{Splits: splits, Total: total}, err
}

// Dividends returns a page of cash dividends by ex-date (q.Sort, newest
// first by default).
func (s *Store) Dividends(ctx context.Context, q marketdata.ActionQuery) (marketdata.DividendPage, error) {
	dividends, total, err := actions(ctx, s, "dividends", "amount", q, func(symbol string, date time.Time, amount float64) marketdata.Dividend {
		return marketdata.Dividend{Symbol: symbol, Date: date, Amount: amount}
	})
	return marketdata.DividendPage{Dividends: dividends, Total: total}, err
}

// actions reads a page of the corporate actions in table, each made by
// newAction from its symbol, date and value column; errors are labelled
// with the table.
func actions[T any](ctx context.Context, s *Store, table, value string, q marketdata.ActionQuery, newAction func(symbol string, date time.Time, value float64) T) ([]T, int64, error) {
	var symbols any // NULL: all symbols
	if len(q.Symbols) > 0 {
		symbols = q.Symbols
		if err := s.anyKnown(ctx, q.Symbols); err != nil {
			return nil, 0, fmt.Errorf("list %s: %w", table, err)
		}
	}
	countSQL, pageSQL := actionSQL(table, value, len(q.Symbols) > 0, q.Sort)
	items, total, err := countedPage(ctx, s.db, countSQL, pageSQL, []any{symbols, dateBound(q.DateFrom, false), dateBound(q.DateTo, true)},
		q.Limit, q.Offset, func(sc scanner) (T, error) {
			var symbol string
			var date time.Time
			var value float64
			err := sc.Scan(&symbol, &date, &value)
			return newAction(symbol, date, value), err
		})
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", table, err)
	}
	return items, total, nil
}

// anyKnown is marketdata.ErrNoValidSymbols when no symbol is a known
// ticker.
func (s *Store) anyKnown(ctx context.Context, symbols []string) error {
	var known bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tickers WHERE symbol = ANY($1::text[]))`, symbols).Scan(&known); err != nil {
		return marketdatadb.Translate(err)
	}
	if !known {
		return marketdata.ErrNoValidSymbols
	}
	return nil
}

// countedPage counts every match with countSQL and, unless the page starts
// past them, reads it with pageSQL, which takes args then LIMIT and OFFSET;
// scan reads one row. Errors are translated, not labelled.
func countedPage[T any](ctx context.Context, db *sql.DB, countSQL, pageSQL string, args []any, limit, offset int, scan func(scanner) (T, error)) ([]T, int64, error) {
	var total int64
	if err := db.QueryRowContext(ctx, countSQL, args...).Scan(&total); err != nil {
		return nil, 0, marketdatadb.Translate(err)
	}
	if total == 0 || int64(offset) >= total {
		return nil, total, nil
	}
	rows, err := db.QueryContext(ctx, pageSQL, append(args, limitArg(limit), offset)...)
	if err != nil {
		return nil, 0, marketdatadb.Translate(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, 0, marketdatadb.Translate(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, marketdatadb.Translate(err)
	}
	return out, total, nil
}
