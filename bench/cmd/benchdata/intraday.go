package main

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// intradayCSVHeader is the vendor layout `marketdata-svc import --kind
// intraday` reads: one row per symbol and minute, the timestamp in UTC with
// its offset. The same file loads with COPY into a table of intraday_bars'
// columns.
var intradayCSVHeader = "Symbol,Timestamp,Open,High,Low,Close,Volume\n"

// IntradayFirstDay is the first trading day of the generated minutes, a
// Monday. Day i (0-based) is the i-th weekday from it, so day i is
// (i/5)*7 + i%5 calendar days later; the bench's pgbench prelude relies on
// that, and on every day falling in 2025.
var IntradayFirstDay = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

// IntradayMaxDays is how many weekdays from IntradayFirstDay stay in 2025.
const IntradayMaxDays = 257

// sessionMinutes is a regular New York session, 09:30 to 16:00.
const sessionMinutes = 390

// intradaySpec says which minutes to write.
type intradaySpec struct {
	symbols, days int
	prefix        string
	seed          uint64
	month         string // YYYY-MM: only that month's days; "" for all
	header        bool
}

// intradaySymbol is the name of symbol i (1-based).
func intradaySymbol(prefix string, i int) string { return fmt.Sprintf("%s%04d", prefix, i) }

// writeIntraday writes the minutes of spec month by month (or one month),
// and inside a month symbol by symbol, each symbol's days and their 390
// minutes of the regular session in time order: rows come in (symbol, ts)
// order within a month, the order of each partition's primary key. Every (symbol, day) has
// its own random stream, so a month written alone has the same rows as in
// the whole file.
func writeIntraday(w *bufio.Writer, s intradaySpec) (int, error) {
	if s.days < 1 || s.days > IntradayMaxDays {
		return 0, fmt.Errorf("days: want 1..%d (weekdays of 2025 from %s)", IntradayMaxDays, IntradayFirstDay.Format(time.DateOnly))
	}
	if s.symbols < 1 || s.symbols > 9999 {
		return 0, errors.New("symbols: want 1..9999")
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		return 0, err
	}
	if s.header {
		if _, err := w.WriteString(intradayCSVHeader); err != nil {
			return 0, err
		}
	}
	names := make([]string, s.symbols)
	for i := range names {
		names[i] = intradaySymbol(s.prefix, i+1)
	}
	// Days grouped by month, symbols inside each month: the file (and each
	// partition) is in primary-key order.
	type month struct {
		key  string
		days []int
	}
	var months []month
	for d := range s.days {
		key := intradayDay(d).Format("2006-01")
		if s.month != "" && key != s.month {
			continue
		}
		if len(months) == 0 || months[len(months)-1].key != key {
			months = append(months, month{key: key})
		}
		months[len(months)-1].days = append(months[len(months)-1].days, d)
	}
	if s.month != "" && len(months) == 0 {
		return 0, fmt.Errorf("month %s has none of the %d days", s.month, s.days)
	}
	var line []byte
	n := 0
	for _, m := range months {
		for si, sym := range names {
			for _, d := range m.days {
				day := intradayDay(d)
				open := time.Date(day.Year(), day.Month(), day.Day(), 9, 30, 0, 0, ny).UTC()
				h := fnv.New64a()
				h.Write([]byte(sym))
				rng := rand.New(rand.NewPCG(s.seed^h.Sum64(), uint64(d)))
				// A level per symbol drifting slowly over the year, then a
				// walk through the day from there.
				price := (20 + float64((si*7919)%180)) * (1 + 0.2*math.Sin(float64(d)/23+float64(si)))
				for i := range sessionMinutes {
					o := price
					price = math.Max(0.5, price*(1+rng.NormFloat64()*0.001))
					hi := math.Max(o, price) * (1 + rng.Float64()*0.0005)
					lo := math.Min(o, price) * (1 - rng.Float64()*0.0005)
					line = append(line[:0], sym...)
					line = append(line, ',')
					line = open.Add(time.Duration(i)*time.Minute).AppendFormat(line, time.RFC3339)
					for _, v := range [4]float64{o, hi, lo, price} {
						line = append(line, ',')
						line = strconv.AppendFloat(line, math.Round(v*100)/100, 'f', 2, 64)
					}
					line = append(line, ',')
					line = strconv.AppendInt(line, int64(100+rng.IntN(20_000)), 10)
					line = append(line, '\n')
					if _, err := w.Write(line); err != nil {
						return n, err
					}
					n++
				}
			}
		}
	}
	return n, nil
}

// intradayDay is trading day d (0-based).
func intradayDay(d int) time.Time { return IntradayFirstDay.AddDate(0, 0, d/5*7+d%5) }
