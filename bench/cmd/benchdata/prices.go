package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// priceCSVHeader is the layout of the generated price file: one row per
// symbol and trading day, symbols one after another, dates ascending.
var priceCSVHeader = []string{"Symbol", "Date", "Open", "High", "Low", "Close", "Volume"}

// writePrices writes rows daily bars: rows/days symbols named prefix0001...
// with days weekdays each from 2010-01-04, as a random walk.
func writePrices(w *csv.Writer, rows, days int, prefix string, seed uint64) (int, error) {
	rng := rand.New(rand.NewPCG(seed, 0x707269636573))
	if err := w.Write(priceCSVHeader); err != nil {
		return 0, err
	}
	dates := weekdays(time.Date(2010, 1, 4, 0, 0, 0, 0, time.UTC), days)
	rec := make([]string, 7)
	n := 0
	for sym := 1; n < rows; sym++ {
		rec[0] = fmt.Sprintf("%s%04d", prefix, sym)
		price := 20 + rng.Float64()*180
		for d := 0; d < days && n < rows; d++ {
			open := price
			price = math.Max(1, price*(1+rng.NormFloat64()*0.02))
			high := math.Max(open, price) * (1 + rng.Float64()*0.01)
			low := math.Min(open, price) * (1 - rng.Float64()*0.01)
			rec[1] = dates[d]
			rec[2] = money(open)
			rec[3] = money(high)
			rec[4] = money(low)
			rec[5] = money(price)
			rec[6] = strconv.Itoa(100_000 + rng.IntN(10_000_000))
			if err := w.Write(rec); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

func money(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', 2, 64) }

func weekdays(from time.Time, n int) []string {
	out := make([]string, 0, n)
	for d := from; len(out) < n; d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			out = append(out, d.Format(time.DateOnly))
		}
	}
	return out
}
