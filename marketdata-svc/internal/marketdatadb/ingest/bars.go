package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/adjust"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

var (
	rawColumns    = []string{"symbol", "date", "open", "high", "low", "close", "volume"}
	stagedColumns = append([]string{"line"}, rawColumns...)
	allColumns    = append(append([]string(nil), rawColumns...), "split_factor", "dividend", "price_factor", "volume_factor")
)

// copySource reads a BarSource as the binary COPY stream of its rows'
// columns (copyStream) and gathers, on the way, the symbols and the
// corporate actions carried by the rows.
type copySource struct {
	src     BarSource
	columns []string
	peeked  *BarRow
	done    bool
	cur     BarRow
	read    int64
	// first is the earliest date read.
	first     time.Time
	symbols   symbolSet
	splits    []marketdata.Split
	dividends []marketdata.Dividend
}

func newCopySource(src BarSource, columns []string) *copySource {
	return &copySource{src: src, columns: columns}
}

// peek returns the first row without consuming it.
func (c *copySource) peek() (BarRow, bool) {
	if c.peeked == nil {
		if !c.src.Next() {
			c.done = true
			return BarRow{}, false
		}
		b := c.src.Bar()
		c.peeked = &b
	}
	return *c.peeked, true
}

func (c *copySource) Next() bool {
	var b BarRow
	switch {
	case c.peeked != nil:
		b, c.peeked = *c.peeked, nil
	case c.done || !c.src.Next():
		c.done = true
		return false
	default:
		b = c.src.Bar()
	}
	c.read++
	c.symbols.add(b.Symbol)
	if c.first.IsZero() || b.Date.Before(c.first) {
		c.first = b.Date
	}
	if b.SplitFactor > 0 && b.SplitFactor != 1 {
		c.splits = append(c.splits, marketdata.Split{Symbol: b.Symbol, Date: b.Date, Factor: b.SplitFactor})
	}
	if b.Dividend != 0 {
		c.dividends = append(c.dividends, marketdata.Dividend{Symbol: b.Symbol, Date: b.Date, Amount: b.Dividend})
	}
	c.cur = b
	return true
}

func (c *copySource) Err() error { return c.src.Err() }

// appendRow appends the current row to buf as a tuple of COPY's binary
// format: the field count, then each field's length and value (int4 and
// date as 4 bytes, float8 as 8, text as its bytes, all big-endian).
func (c *copySource) appendRow(buf []byte) []byte {
	b := &c.cur
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(c.columns))) // #nosec G115 -- 8 to 11 columns
	if c.columns[0] == "line" {
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(b.Line))) // #nosec G115 -- CSV line number of an imported file, reported in errors; files are far below 2^31 lines
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(b.Symbol))) // #nosec G115 -- a symbol is far below 2^31 bytes
	buf = append(buf, b.Symbol...)
	// A date is its days since 2000-01-01, of its calendar day as written.
	day := time.Date(b.Date.Year(), b.Date.Month(), b.Date.Day(), 0, 0, 0, 0, time.UTC).Unix()/86400 - 10957
	buf = binary.BigEndian.AppendUint32(buf, 4)
	buf = binary.BigEndian.AppendUint32(buf, uint32(int32(day))) // #nosec G115 -- a date's days since 2000 fit in 32 bits
	f8 := func(v float64) {
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(v))
	}
	f8(b.Open)
	f8(b.High)
	f8(b.Low)
	f8(b.Close)
	f8(b.Volume)
	if len(c.columns) == len(allColumns) {
		sf := b.SplitFactor
		if sf == 0 {
			sf = 1
		}
		f8(sf)
		f8(b.Dividend)
		f8(b.PriceFactor)
		f8(b.VolumeFactor)
	}
	return buf
}

// copyStream is the binary COPY stream of a copySource's rows (the
// format of PostgreSQL's "COPY ... FROM STDIN BINARY": a signature and
// header, the tuples, a trailer). It is built here, not by pgx's CopyFrom,
// which puts every value in an interface and encodes it through its type
// map: for a day of an exchange that took as long as parsing the day. The
// columns are few and fixed (text, date, float8, int4).
type copyStream struct {
	cs         *copySource
	buf        []byte
	off        int
	begun, end bool
}

// copyHeader is the binary format's signature, flags and header
// extension length.
const copyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func (s *copyStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if s.off == len(s.buf) {
			if s.end {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			if err := s.fill(); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], s.buf[s.off:])
		s.off += k
		n += k
	}
	return n, nil
}

// fill encodes the next rows, about 64 KiB of them.
func (s *copyStream) fill() error {
	s.buf, s.off = s.buf[:0], 0
	if !s.begun {
		s.buf, s.begun = append(s.buf, copyHeader...), true
	}
	for len(s.buf) < 64<<10 {
		if !s.cs.Next() {
			if err := s.cs.Err(); err != nil {
				return err
			}
			s.buf, s.end = append(s.buf, 0xff, 0xff), true
			return nil
		}
		s.buf = s.cs.appendRow(s.buf)
	}
	return nil
}

// copyRows streams cs's rows into table (an identifier of this package,
// never input) and returns how many were stored.
func copyRows(ctx context.Context, tx pgx.Tx, table string, cs *copySource) (int64, error) {
	sql := "COPY " + table + " (" + strings.Join(cs.columns, ", ") + ") FROM STDIN BINARY"
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, &copyStream{cs: cs}, sql)
	if err != nil {
		return 0, copyError(err, cs)
	}
	return tag.RowsAffected(), nil
}

type barLoad struct {
	read, changed int64
	// symbols are the distinct symbols of the bars read, sorted.
	symbols   []string
	splits    []marketdata.Split
	dividends []marketdata.Dividend
	// copiedFrom is the earliest date of bars copied straight into
	// eod_bars, all of them new (zero when they were merged instead, which
	// notes its own changes).
	copiedFrom time.Time
	// from is the earliest date of the bars read, stored or not.
	from time.Time
}

func (b *barLoad) take(c *copySource) {
	b.read, b.symbols, b.splits, b.dividends, b.from = c.read, c.symbols.sorted(), c.splits, c.dividends, c.first
}

// loadBars streams l's bars into eod_bars. Bars not stored yet, as every
// bar of a new day is, are copied straight into the table (the speed of
// COPY); when the first bar is already stored, or a later one turns out
// to be (a unique violation rolls the direct copy back), they are staged
// and merged (stagedUpsert), which writes only what differs.
func loadBars(ctx context.Context, tx pgx.Tx, l Load) (barLoad, error) {
	var out barLoad
	src, err := l.Bars()
	if err != nil {
		return out, &sourceError{err}
	}
	if l.FactorsGiven || len(l.ReplaceSymbols) > 0 {
		cols := rawColumns
		if l.FactorsGiven {
			cols = allColumns
		}
		cs := newCopySource(src, cols)
		n, err := copyRows(ctx, tx, "eod_bars", cs)
		if err != nil {
			return out, err
		}
		out.take(cs)
		out.changed, out.copiedFrom = n, cs.first
		return out, nil
	}
	cs := newCopySource(src, rawColumns)
	first, ok := cs.peek()
	if !ok {
		out.take(cs)
		if err := src.Err(); err != nil {
			return out, &sourceError{err}
		}
		return out, nil
	}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM eod_bars WHERE symbol = $1 AND date = $2)", first.Symbol, first.Date).Scan(&exists); err != nil {
		return out, marketdatadb.Translate(err)
	}
	if !exists {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return out, marketdatadb.Translate(err)
		}
		n, err := copyRows(ctx, sp, "eod_bars", cs)
		if err == nil {
			if err := sp.Commit(ctx); err != nil {
				return out, marketdatadb.Translate(err)
			}
			out.take(cs)
			out.changed, out.copiedFrom = n, cs.first
			return out, nil
		}
		if !isUniqueViolation(err) {
			return out, copyError(err, cs)
		}
		if err := sp.Rollback(ctx); err != nil {
			return out, marketdatadb.Translate(err)
		}
		if src, err = l.Bars(); err != nil {
			return out, &sourceError{err}
		}
		cs = newCopySource(src, stagedColumns)
	} else {
		cs.columns = stagedColumns
	}
	return stagedUpsert(ctx, tx, cs)
}

// sourceError is a failure of the caller's bar stream (bad rows, a file
// that does not open); Apply returns it unwrapped, as the caller made it.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// copyError keeps a source's own error (bad rows) as it is and translates
// driver errors.
func copyError(err error, cs *copySource) error {
	if srcErr := cs.Err(); srcErr != nil {
		return &sourceError{srcErr} // the server only echoes it inside "COPY from stdin failed"
	}
	return marketdatadb.Translate(err)
}

// stagedUpsert copies the bars into a temporary table, then inserts new
// rows and updates rows whose raw values differ, in one statement; rows that
// are already equal are not touched, so a re-import changes nothing. The
// same statement notes each symbol's earliest date written in
// load_changes.
func stagedUpsert(ctx context.Context, tx pgx.Tx, cs *copySource) (barLoad, error) {
	var out barLoad
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE eod_staging (
  line integer, symbol text, date date, open float8, high float8, low float8, close float8, volume float8
) ON COMMIT DROP`); err != nil {
		return out, marketdatadb.Translate(err)
	}
	if _, err := copyRows(ctx, tx, "eod_staging", cs); err != nil {
		return out, err
	}
	out.take(cs)
	sp, err := tx.Begin(ctx)
	if err != nil {
		return out, marketdatadb.Translate(err)
	}
	err = sp.QueryRow(ctx, `
WITH written AS (
INSERT INTO eod_bars AS b (symbol, date, open, high, low, close, volume)
SELECT symbol, date, open, high, low, close, volume FROM eod_staging ORDER BY symbol, date
ON CONFLICT (symbol, date) DO UPDATE SET open = EXCLUDED.open, high = EXCLUDED.high,
  low = EXCLUDED.low, close = EXCLUDED.close, volume = EXCLUDED.volume
WHERE (b.open, b.high, b.low, b.close, b.volume)
  IS DISTINCT FROM (EXCLUDED.open, EXCLUDED.high, EXCLUDED.low, EXCLUDED.close, EXCLUDED.volume)
RETURNING b.symbol, b.date
), noted AS (
INSERT INTO load_changes SELECT from_date, array_agg(symbol)
FROM (SELECT symbol, min(date) AS from_date FROM written GROUP BY symbol) AS w GROUP BY from_date
)
SELECT count(*) FROM written`).Scan(&out.changed)
	if err != nil {
		return out, duplicates(ctx, tx, sp, err)
	}
	return out, marketdatadb.Translate(sp.Commit(ctx))
}

// duplicates is the error of a failed upsert of staged bars: their
// duplicates, when that is why it failed (see upsertError).
func duplicates(ctx context.Context, tx, sp pgx.Tx, err error) error {
	var e DuplicateBarsError
	return upsertError(ctx, tx, sp, err, "eod_staging", "date", &e, func(symbol string, date time.Time, lines []int) {
		e.Duplicates = append(e.Duplicates, DuplicateBar{Symbol: symbol, Date: date, Lines: lines})
	})
}

// upsertError is the error of a failed upsert from a staging table under
// savepoint sp. When err says a row was given twice (21000), sp is rolled
// back, add is called for the first 20 (symbol, at) pairs given more than
// once, with the lines they came from, and found, the error add filled, is
// returned; table and at are identifiers of this package, never input.
func upsertError(ctx context.Context, tx, sp pgx.Tx, err error, table, at string, found error, add func(symbol string, at time.Time, lines []int)) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "21000" {
		return marketdatadb.Translate(err)
	}
	if err := sp.Rollback(ctx); err != nil {
		return marketdatadb.Translate(err)
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(`
SELECT symbol, %[2]s, array_agg(line ORDER BY line) FROM %[1]s
GROUP BY symbol, %[2]s HAVING count(*) > 1 ORDER BY min(line) LIMIT 20`, table, at))
	if err != nil {
		return marketdatadb.Translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var symbol string
		var t time.Time
		var lines []int32
		if err := rows.Scan(&symbol, &t, &lines); err != nil {
			return marketdatadb.Translate(err)
		}
		ls := make([]int, len(lines))
		for i, l := range lines {
			ls[i] = int(l)
		}
		add(symbol, t, ls)
	}
	if err := rows.Err(); err != nil {
		return marketdatadb.Translate(err)
	}
	return found
}

// readjust recomputes, for each symbol of load_symbols whose factors the
// load can have changed, the split and dividend columns and the backward
// adjustment factors of all its bars, and writes the bars whose values
// changed. It returns how many changed.
//
// A bar's factors come from the actions after it, and a dividend's from
// the close before its ex-date, so bars from a date on can change nothing
// of a symbol whose actions all lie before that date: its older bars keep
// their factors, and the new ones take the columns' defaults (factors 1,
// no action), as every load writes them. So a symbol is recomputed when
// the load names it in an action or replaces it (named), or when it has
// an action on or after the earliest date of the load's bars (barsFrom;
// zero without bars). A day of an exchange then recomputes the symbols with an
// action that day, not every symbol with an action in its history, which
// read 60% of a 100M-bar universe's histories (bench scale_update). A
// re-import still repairs what it covers. A symbol without splits or
// dividends is left alone, since actions are removed only with the
// symbol's bars (ReplaceSymbols).
func readjust(ctx context.Context, tx pgx.Tx, named []string, barsFrom time.Time) (int64, error) {
	since := pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true}
	if !barsFrom.IsZero() {
		since = pgtype.Date{Time: barsFrom, Valid: true}
	}
	rows, err := tx.Query(ctx, `
SELECT s.symbol FROM load_symbols AS s
LEFT JOIN (SELECT DISTINCT unnest($1::text[]) AS symbol) AS n USING (symbol)
WHERE EXISTS (SELECT 1 FROM splits WHERE symbol = s.symbol AND (n.symbol IS NOT NULL OR date >= $2))
   OR EXISTS (SELECT 1 FROM dividends WHERE symbol = s.symbol AND (n.symbol IS NOT NULL OR date >= $2))
ORDER BY 1`, named, since)
	if err != nil {
		return 0, marketdatadb.Translate(err)
	}
	withActions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, marketdatadb.Translate(err)
	}
	var total int64
	var changed []string
	var from []time.Time
	for _, sym := range withActions {
		n, first, err := readjustSymbol(ctx, tx, sym)
		if err != nil {
			return 0, fmt.Errorf("adjust %s: %w", sym, err)
		}
		if n > 0 {
			changed, from = append(changed, sym), append(from, first)
		}
		total += n
	}
	return total, noteFrom(ctx, tx, changed, from)
}

type storedBar struct {
	date                   time.Time
	close, split, dividend float64
	priceFactor, volFactor float64
}

// readjustSymbol recomputes one symbol's factors (see readjust) and
// returns how many of its bars changed and the date of the earliest.
func readjustSymbol(ctx context.Context, tx pgx.Tx, symbol string) (n int64, first time.Time, err error) {
	rows, err := tx.Query(ctx, `SELECT date, close, split_factor, dividend, price_factor, volume_factor
FROM eod_bars WHERE symbol = $1 ORDER BY date`, symbol)
	if err != nil {
		return 0, first, marketdatadb.Translate(err)
	}
	var bars []storedBar
	for rows.Next() {
		var b storedBar
		if err := rows.Scan(&b.date, &b.close, &b.split, &b.dividend, &b.priceFactor, &b.volFactor); err != nil {
			rows.Close()
			return 0, first, marketdatadb.Translate(err)
		}
		bars = append(bars, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, first, marketdatadb.Translate(err)
	}
	rows, err = tx.Query(ctx, `
SELECT date, factor, 0::float8, 0::float8 FROM splits WHERE symbol = $1
UNION ALL
SELECT date, 0::float8, amount, coalesce(ratio, 0) FROM dividends WHERE symbol = $1`, symbol)
	if err != nil {
		return 0, first, marketdatadb.Translate(err)
	}
	var events []adjust.Event
	splitOn, divOn := map[time.Time]float64{}, map[time.Time]float64{}
	for rows.Next() {
		var e adjust.Event
		if err := rows.Scan(&e.Date, &e.SplitFactor, &e.Dividend, &e.DividendRatio); err != nil {
			rows.Close()
			return 0, first, marketdatadb.Translate(err)
		}
		events = append(events, e)
		if e.SplitFactor > 0 {
			splitOn[e.Date] = e.SplitFactor
		}
		if e.Dividend > 0 {
			divOn[e.Date] = e.Dividend
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, first, marketdatadb.Translate(err)
	}
	dates := make([]time.Time, len(bars))
	closes := make([]float64, len(bars))
	for i, b := range bars {
		dates[i], closes[i] = b.date, b.close
	}
	pf, vf := adjust.Factors(dates, closes, events)
	var (
		upDates                    []time.Time
		upSplit, upDiv, upPF, upVF []float64
	)
	for i, b := range bars {
		split, ok := splitOn[b.date]
		if !ok {
			split = 1
		}
		div := divOn[b.date]
		if b.split == split && b.dividend == div && b.priceFactor == pf[i] && b.volFactor == vf[i] {
			continue
		}
		upDates = append(upDates, b.date)
		upSplit, upDiv = append(upSplit, split), append(upDiv, div)
		upPF, upVF = append(upPF, pf[i]), append(upVF, vf[i])
	}
	if len(upDates) == 0 {
		return 0, first, nil
	}
	tag, err := tx.Exec(ctx, `
UPDATE eod_bars b SET split_factor = u.split, dividend = u.dividend, price_factor = u.pf, volume_factor = u.vf
FROM unnest($2::date[], $3::float8[], $4::float8[], $5::float8[], $6::float8[]) AS u(date, split, dividend, pf, vf)
WHERE b.symbol = $1 AND b.date = u.date`, symbol, upDates, upSplit, upDiv, upPF, upVF)
	if err != nil {
		return 0, first, marketdatadb.Translate(err)
	}
	return tag.RowsAffected(), upDates[0], nil
}
