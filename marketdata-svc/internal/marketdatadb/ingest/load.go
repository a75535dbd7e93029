package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// BarRow is one raw daily bar to load. SplitFactor (0 or 1: none) and
// Dividend (0: none) are corporate actions with their ex-date on Date, as
// some CSV layouts carry them per row. PriceFactor and VolumeFactor are
// read only when Load.FactorsGiven is set. Line is the source line, used in
// error messages.
type BarRow struct {
	Symbol                         string
	Date                           time.Time
	Open, High, Low, Close, Volume float64
	SplitFactor, Dividend          float64
	PriceFactor, VolumeFactor      float64
	Line                           int
}

// BarSource streams bars. When Next returns false, Err reports whether the
// stream failed (for instance on bad rows); a failed stream rolls the whole
// load back and Apply returns Err's error unchanged.
type BarSource interface {
	Next() bool
	Bar() BarRow
	Err() error
}

// TickerRow is a ticker as imported. An empty ExchangeMIC leaves the
// listing exchange unknown.
type TickerRow struct {
	Symbol        string
	Name          string
	AssetType     string
	PriceCurrency string
	ExchangeMIC   string
	HasIntraday   bool
	Country       string // empty: unknown
}

// Load is a set of changes applied in one transaction: all of it or none.
type Load struct {
	Exchanges []marketdata.Exchange
	Tickers   []TickerRow
	Splits    []marketdata.Split
	Dividends []marketdata.Dividend
	// Bars opens a fresh stream of the bars to load; it may be called twice
	// (a fast direct COPY is tried first and, if some rows already exist,
	// redone through a staging table as an upsert). Nil loads no bars.
	Bars func() (BarSource, error)
	// DefaultExchange is the listing MIC given to tickers that the load
	// creates for bars of unknown symbols.
	DefaultExchange string
	// ReplaceSymbols deletes these symbols' bars, splits and dividends first,
	// so that a generated dataset is reloaded, not merged.
	ReplaceSymbols []string
	// FactorsGiven trusts BarRow's adjustment factors and split/dividend
	// columns (a generator computed them) instead of recomputing them.
	FactorsGiven bool
}

// LoadResult says what a load changed.
type LoadResult struct {
	BarsRead         int64
	BarsChanged      int64
	TickersChanged   int64
	ExchangesChanged int64
	ActionsChanged   int64
	// BarsAdjusted counts bars whose adjustment factors were recomputed to a
	// new value.
	BarsAdjusted int64
	// Version is the new data version, or 0 when nothing changed.
	Version int64
	// Symbols are the distinct symbols of the bars read, sorted.
	Symbols []string
}

// Changed reports whether the load changed any data.
func (r LoadResult) Changed() bool { return r.Version != 0 }

// DuplicateBar is one (symbol, date) given more than once in a load.
type DuplicateBar struct {
	Symbol string
	Date   time.Time
	Lines  []int
}

// DuplicateBarsError reports bars given more than once in one load.
type DuplicateBarsError struct{ Duplicates []DuplicateBar }

// Error names each duplicated bar with the lines it came from.
func (e *DuplicateBarsError) Error() string {
	var b strings.Builder
	for i, d := range e.Duplicates {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "duplicate bar %s %s on lines %v", d.Symbol, d.Date.Format(time.DateOnly), d.Lines)
	}
	return b.String()
}

// Apply writes l in one transaction, recomputes the adjustment factors of
// every symbol whose bars or corporate actions changed, and, if anything
// changed, bumps the data version. Re-applying the same load changes
// nothing.
func (s *Store) Apply(ctx context.Context, l Load) (LoadResult, error) {
	return s.inLoadTx(ctx, "load", func(ctx context.Context, tx pgx.Tx) (LoadResult, error) { return apply(ctx, tx, l) })
}

// inLoadTx runs a load (apply) in one transaction on a connection of its
// own, committed when apply succeeds. A failure of the load's source is
// returned as the source gave it; others are wrapped with label.
func (s *Store) inLoadTx(ctx context.Context, label string, apply func(context.Context, pgx.Tx) (LoadResult, error)) (LoadResult, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return LoadResult{}, fmt.Errorf("%s: %w", label, marketdatadb.Translate(err))
	}
	defer conn.Close()
	var res LoadResult
	err = conn.Raw(func(driverConn any) error {
		pc := driverConn.(*stdlib.Conn).Conn()
		tx, err := pc.Begin(ctx)
		if err != nil {
			return marketdatadb.Translate(err)
		}
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
		if res, err = apply(ctx, tx); err != nil {
			return err
		}
		return marketdatadb.Translate(tx.Commit(ctx))
	})
	var srcErr *sourceError
	if errors.As(err, &srcErr) {
		return LoadResult{}, srcErr.err
	}
	if err != nil {
		return LoadResult{}, fmt.Errorf("%s: %w", label, err)
	}
	return res, nil
}

func apply(ctx context.Context, tx pgx.Tx, l Load) (LoadResult, error) {
	var res LoadResult
	// A large load outlives the request-sized statement timeout. Its
	// statements over a whole exchange's symbols look costly to the planner
	// but run once each: compiling them (JIT) only adds its own time.
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0; SET LOCAL jit = off"); err != nil {
		return res, marketdatadb.Translate(err)
	}
	var err error
	if res.ExchangesChanged, err = upsertExchanges(ctx, tx, l.Exchanges); err != nil {
		return res, err
	}
	if res.TickersChanged, err = upsertTickers(ctx, tx, l.Tickers); err != nil {
		return res, err
	}
	// A changed ticker or exchange changes the fields every bar of its
	// symbols repeats, or which symbols an exchange filter keeps: such a
	// load records no changes, which the caches read as "anything".
	exact := res.ExchangesChanged+res.TickersChanged == 0
	if err := stageChanges(ctx, tx); err != nil {
		return res, err
	}
	// Every symbol the load writes, changed or not, has its factors
	// recomputed from the symbol's full state (below), so a re-import also
	// repairs factors that are wrong for any reason: the bars' symbols
	// (load_symbols, stageSymbols) and touched, those of its other rows.
	var touched []string
	if len(l.ReplaceSymbols) > 0 {
		for _, table := range []string{"eod_bars", "splits", "dividends"} {
			tag, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE symbol = ANY($1)", l.ReplaceSymbols)
			if err != nil {
				return res, marketdatadb.Translate(err)
			}
			if tag.RowsAffected() > 0 {
				res.BarsChanged += tag.RowsAffected()
			}
		}
		touched = append(touched, l.ReplaceSymbols...)
		if err := noteEveryDate(ctx, tx, l.ReplaceSymbols); err != nil {
			return res, err
		}
	}
	splits, divs := l.Splits, l.Dividends
	var barsFrom time.Time // the earliest date of the bars read
	if l.Bars != nil {
		bl, err := loadBars(ctx, tx, l)
		if err != nil {
			return res, err
		}
		res.BarsRead = bl.read
		res.BarsChanged += bl.changed
		res.Symbols = bl.symbols
		barsFrom = bl.from
		splits, divs = append(slices.Clip(splits), bl.splits...), append(slices.Clip(divs), bl.dividends...)
		if len(bl.symbols) > 0 {
			if err := stageSymbols(ctx, tx, bl.symbols); err != nil {
				return res, err
			}
			if !bl.copiedFrom.IsZero() {
				if err := noteCopied(ctx, tx, bl.copiedFrom); err != nil {
					return res, err
				}
			}
			n, err := ensureTickers(ctx, tx, l.DefaultExchange)
			if err != nil {
				return res, err
			}
			res.TickersChanged += n
		}
	}
	actionSymbols, err := upsertActions(ctx, tx, splits, divs)
	if err != nil {
		return res, err
	}
	res.ActionsChanged = int64(len(actionSymbols))
	if err := noteEveryDate(ctx, tx, actionSymbols); err != nil {
		return res, err
	}
	for _, sp := range splits {
		touched = append(touched, sp.Symbol)
	}
	for _, d := range divs {
		touched = append(touched, d.Symbol)
	}
	if len(touched) > 0 || len(res.Symbols) > 0 {
		slices.Sort(touched)
		if err := stageSymbols(ctx, tx, slices.Compact(touched)); err != nil {
			return res, err
		}
		// Two loads of one symbol each recompute its factors from the
		// symbol's rows: without a lock each reads a snapshot without the
		// other's uncommitted rows, and the later commit leaves factors that
		// match neither. The transaction-level lock per symbol (per bucket
		// of symbols, see lockSymbols), taken in sorted order so loads
		// cannot deadlock on each other, makes the second load wait until
		// the first commits; its statements (READ COMMITTED) then see the
		// first's rows.
		// A load with given factors (the generator) takes the locks too,
		// so that it is ordered with the imports of the same symbols.
		if err := lockSymbols(ctx, tx); err != nil {
			return res, err
		}
		if !l.FactorsGiven {
			if res.BarsAdjusted, err = readjust(ctx, tx, touched, barsFrom); err != nil {
				return res, err
			}
		}
	}
	if res.BarsChanged+res.TickersChanged+res.ExchangesChanged+res.ActionsChanged+res.BarsAdjusted == 0 {
		return res, nil
	}
	if err := tx.QueryRow(ctx, "UPDATE data_version SET version = version + 1 RETURNING version").Scan(&res.Version); err != nil {
		return res, marketdatadb.Translate(err)
	}
	if exact {
		if err := recordChanges(ctx, tx, res.Version); err != nil {
			return res, err
		}
	}
	return res, nil
}

// symbolLockSpace is the first key of the two-key advisory locks on
// symbols, so they cannot collide with other advisory locks (goose's
// migration lock uses the one-key form).
const symbolLockSpace = 0x74646d // "tdm"

// lockBuckets bounds the advisory locks one load holds. Each lock takes a
// slot of the server's shared lock table (max_locks_per_transaction times
// the connections: 6,400 by default), so a lock per symbol failed a load
// of a whole exchange's day with "out of shared memory". A symbol's lock is
// its hash's bucket instead: loads of one symbol are still ordered, which
// is all the lock is for, and loads that merely share a bucket wait for
// each other too.
const lockBuckets = 1024

// stageSymbols adds symbols to the temporary table load_symbols, which
// the statements after the bars read: the symbols of a day of an exchange
// are sent once, not as an array to each statement, whose encoding cost
// more than the statements did.
func stageSymbols(ctx context.Context, tx pgx.Tx, symbols []string) error {
	if len(symbols) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS load_symbols (symbol text NOT NULL) ON COMMIT DROP"); err != nil {
		return fmt.Errorf("stage symbols: %w", marketdatadb.Translate(err))
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"load_symbols"}, []string{"symbol"}, pgx.CopyFromSlice(len(symbols), func(i int) ([]any, error) {
		return []any{symbols[i]}, nil
	})); err != nil {
		return fmt.Errorf("stage symbols: %w", marketdatadb.Translate(err))
	}
	return nil
}

// lockSymbols takes the transaction's advisory lock on the bucket of each
// symbol of load_symbols, buckets in ascending order (the same order in
// every load, so none deadlocks).
func lockSymbols(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, b) FROM (SELECT DISTINCT hashtext(symbol) & ($2 - 1) AS b FROM load_symbols) AS u ORDER BY b`,
		symbolLockSpace, lockBuckets); err != nil {
		return fmt.Errorf("lock symbols: %w", marketdatadb.Translate(err))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func upsertExchanges(ctx context.Context, tx pgx.Tx, exchanges []marketdata.Exchange) (int64, error) {
	var n int64
	for _, e := range exchanges {
		tag, err := tx.Exec(ctx, `
INSERT INTO exchanges AS x (mic, name, acronym, country_code, country, city, website, timezone, currency)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (mic) DO UPDATE SET name = EXCLUDED.name, acronym = EXCLUDED.acronym,
  country_code = EXCLUDED.country_code, country = EXCLUDED.country, city = EXCLUDED.city,
  website = EXCLUDED.website, timezone = EXCLUDED.timezone, currency = EXCLUDED.currency
WHERE (x.name, x.acronym, x.country_code, x.country, x.city, x.website, x.timezone, x.currency)
  IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.acronym, EXCLUDED.country_code, EXCLUDED.country,
  EXCLUDED.city, EXCLUDED.website, EXCLUDED.timezone, EXCLUDED.currency)`,
			e.MIC, e.Name, e.Acronym, e.CountryCode, e.Country, e.City, e.Website, e.Timezone, e.Currency)
		if err != nil {
			return 0, fmt.Errorf("exchange %s: %w", e.MIC, marketdatadb.Translate(err))
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

func upsertTickers(ctx context.Context, tx pgx.Tx, tickers []TickerRow) (int64, error) {
	var n int64
	for _, t := range tickers {
		asset, cur := t.AssetType, t.PriceCurrency
		if asset == "" {
			asset = "Stock"
		}
		if cur == "" {
			cur = "USD"
		}
		tag, err := tx.Exec(ctx, `
INSERT INTO tickers AS t (symbol, name, asset_type, price_currency, exchange_mic, has_intraday, country)
VALUES ($1, $2, $3, $4, nullif($5, ''), $6, nullif($7, ''))
ON CONFLICT (symbol) DO UPDATE SET name = EXCLUDED.name, asset_type = EXCLUDED.asset_type,
  price_currency = EXCLUDED.price_currency, exchange_mic = EXCLUDED.exchange_mic,
  has_intraday = EXCLUDED.has_intraday, country = EXCLUDED.country
WHERE (t.name, t.asset_type, t.price_currency, t.exchange_mic, t.has_intraday, t.country)
  IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.asset_type, EXCLUDED.price_currency,
  EXCLUDED.exchange_mic, EXCLUDED.has_intraday, EXCLUDED.country)`,
			t.Symbol, t.Name, asset, cur, t.ExchangeMIC, t.HasIntraday, t.Country)
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" {
				return 0, fmt.Errorf("ticker %s: unknown exchange %q (import exchanges first)", t.Symbol, t.ExchangeMIC)
			}
			return 0, fmt.Errorf("ticker %s: %w", t.Symbol, marketdatadb.Translate(err))
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// ensureTickers creates the tickers of the loaded bars (load_symbols)
// that do not exist yet and marks every one as having end-of-day data.
// Their symbols are noted as changed on every date: a symbol unknown
// until now was left out of the pages that named it.
func ensureTickers(ctx context.Context, tx pgx.Tx, mic string) (int64, error) {
	// The tickers already marked are left out before the upsert: a
	// conflict that updates nothing still locks its row, and a day of an
	// exchange would lock (and write) every ticker of it.
	var n int64
	err := tx.QueryRow(ctx, `
WITH added AS (
INSERT INTO tickers AS t (symbol, name, exchange_mic, has_eod)
SELECT s.symbol, s.symbol, nullif($1, ''), true FROM load_symbols AS s
WHERE NOT EXISTS (SELECT 1 FROM tickers WHERE symbol = s.symbol AND has_eod)
ORDER BY s.symbol
ON CONFLICT (symbol) DO UPDATE SET has_eod = true WHERE NOT t.has_eod
RETURNING t.symbol
), noted AS (
INSERT INTO load_changes SELECT '-infinity', array_agg(symbol) FROM added HAVING count(*) > 0
)
SELECT count(*) FROM added`, mic).Scan(&n)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" {
			return 0, fmt.Errorf("unknown exchange %q (import exchanges first)", mic)
		}
		return 0, marketdatadb.Translate(err)
	}
	return n, nil
}

// upsertActions writes splits and dividends in two statements and returns
// the symbols whose actions changed. When one (symbol, date) is given twice,
// the last value wins.
func upsertActions(ctx context.Context, tx pgx.Tx, splits []marketdata.Split, divs []marketdata.Dividend) ([]string, error) {
	type key struct {
		symbol string
		date   time.Time
	}
	changed := map[string]bool{}
	run := func(what, sql string, values map[key]float64) error {
		if len(values) == 0 {
			return nil
		}
		syms := make([]string, 0, len(values))
		dates := make([]time.Time, 0, len(values))
		vals := make([]float64, 0, len(values))
		for k, v := range values {
			syms, dates, vals = append(syms, k.symbol), append(dates, k.date), append(vals, v)
		}
		rows, err := tx.Query(ctx, sql, syms, dates, vals)
		if err != nil {
			return fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("%s: %w", what, marketdatadb.Translate(err))
		}
		for _, s := range got {
			changed[s] = true
		}
		return nil
	}
	sv := make(map[key]float64, len(splits))
	for _, sp := range splits {
		if !(sp.Factor > 0) || math.IsInf(sp.Factor, 0) {
			return nil, fmt.Errorf("split %s %s: factor must be positive", sp.Symbol, sp.Date.Format(time.DateOnly))
		}
		sv[key{sp.Symbol, sp.Date}] = sp.Factor
	}
	dv := make(map[key]marketdata.Dividend, len(divs))
	for _, d := range divs {
		if !(d.Amount >= 0) || math.IsInf(d.Amount, 0) {
			return nil, fmt.Errorf("dividend %s %s: amount must not be negative", d.Symbol, d.Date.Format(time.DateOnly))
		}
		if d.Ratio != 0 && !(d.Ratio > 0 && d.Ratio <= 1) {
			return nil, fmt.Errorf("dividend %s %s: ratio must be in (0, 1]", d.Symbol, d.Date.Format(time.DateOnly))
		}
		dv[key{d.Symbol, d.Date}] = d
	}
	if err := run("splits", `
INSERT INTO splits AS s (symbol, date, factor)
SELECT * FROM unnest($1::text[], $2::date[], $3::float8[])
ON CONFLICT (symbol, date) DO UPDATE SET factor = EXCLUDED.factor WHERE s.factor <> EXCLUDED.factor
RETURNING s.symbol`, sv); err != nil {
		return nil, err
	}
	if len(dv) > 0 {
		syms := make([]string, 0, len(dv))
		dates := make([]time.Time, 0, len(dv))
		amounts := make([]float64, 0, len(dv))
		ratios := make([]float64, 0, len(dv))
		for k, d := range dv {
			syms, dates = append(syms, k.symbol), append(dates, k.date)
			amounts, ratios = append(amounts, d.Amount), append(ratios, d.Ratio)
		}
		// A ratio of 0 is stored as NULL: computed from the previous close.
		rows, err := tx.Query(ctx, `
INSERT INTO dividends AS d (symbol, date, amount, ratio)
SELECT s, dt, a, nullif(r, 0) FROM unnest($1::text[], $2::date[], $3::float8[], $4::float8[]) AS u(s, dt, a, r)
ON CONFLICT (symbol, date) DO UPDATE SET amount = EXCLUDED.amount, ratio = EXCLUDED.ratio
  WHERE (d.amount, d.ratio) IS DISTINCT FROM (EXCLUDED.amount, EXCLUDED.ratio)
RETURNING d.symbol`, syms, dates, amounts, ratios)
		if err != nil {
			return nil, fmt.Errorf("dividends: %w", marketdatadb.Translate(err))
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("dividends: %w", marketdatadb.Translate(err))
		}
		for _, s := range got {
			changed[s] = true
		}
	}
	syms := sortedKeys(changed)
	if len(syms) > 0 { // make sure the symbols exist as tickers
		if _, err := ensureTickersNoEOD(ctx, tx, syms); err != nil {
			return nil, err
		}
	}
	return syms, nil
}

func ensureTickersNoEOD(ctx context.Context, tx pgx.Tx, symbols []string) (int64, error) {
	tag, err := tx.Exec(ctx, `
INSERT INTO tickers (symbol, name) SELECT s, s FROM unnest($1::text[]) AS s
ON CONFLICT (symbol) DO NOTHING`, symbols)
	if err != nil {
		return 0, marketdatadb.Translate(err)
	}
	return tag.RowsAffected(), nil
}
