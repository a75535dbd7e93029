package adjust_test

import (
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/adjust"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func days(ss ...string) []time.Time {
	out := make([]time.Time, len(ss))
	for i, s := range ss {
		out[i] = day(s)
	}
	return out
}

// checkFactors compares Factors' price and volume factors bar by bar.
func checkFactors(t *testing.T, price, volume, wantP, wantV []float64) {
	t.Helper()
	if len(price) != len(wantP) || len(volume) != len(wantV) {
		t.Fatalf("%d/%d factors, want %d/%d", len(price), len(volume), len(wantP), len(wantV))
	}
	for i := range wantP {
		if price[i] != wantP[i] || volume[i] != wantV[i] {
			t.Errorf("bar %d: factors %v/%v, want %v/%v", i, price[i], volume[i], wantP[i], wantV[i])
		}
	}
}

// A 4:1 split ex 2020-08-31 (AAPL's): the day before closes at 400 with a
// volume of 1M; in post-split terms that is 100 and 4M.
func TestFactorsFourForOneSplit(t *testing.T) {
	dates := days("2020-08-27", "2020-08-28", "2020-08-31", "2020-09-01")
	closes := []float64{500, 400, 129, 134}
	price, volume := adjust.Factors(dates, closes, []adjust.Event{{Date: day("2020-08-31"), SplitFactor: 4}})
	checkFactors(t, price, volume, []float64{0.25, 0.25, 1, 1}, []float64{4, 4, 1, 1})
	if got := adjust.Price(400, price[1]); got != 100 {
		t.Errorf("adj_close before the split = %v, want 100", got)
	}
	if got := 1_000_000 * volume[1]; got != 4_000_000 {
		t.Errorf("adj_volume before the split = %v, want 4000000", got)
	}
	if got := adjust.Price(129, price[2]); got != 129 {
		t.Errorf("adj_close on the ex-date = %v, want 129 (unchanged)", got)
	}
}

// A $2 dividend ex 2021-03-03, previous close 100: earlier prices × 0.98.
func TestFactorsCashDividend(t *testing.T) {
	dates := days("2021-03-01", "2021-03-02", "2021-03-03")
	closes := []float64{50, 100, 99}
	price, volume := adjust.Factors(dates, closes, []adjust.Event{{Date: day("2021-03-03"), Dividend: 2}})
	if price[0] != 0.98 || price[1] != 0.98 || price[2] != 1 {
		t.Fatalf("price factors %v, want [0.98 0.98 1]", price)
	}
	if volume[0] != 1 || volume[1] != 1 {
		t.Fatalf("a dividend must not adjust volume: %v", volume)
	}
	if got := adjust.Price(100, price[1]); got != 98 {
		t.Errorf("adj_close = %v, want 98", got)
	}
	if got := adjust.Price(50, price[0]); got != 49 {
		t.Errorf("adj_close two days before = %v, want 49", got)
	}
}

// A dividend on a non-trading ex-date uses the last close before it, and a
// 2:1 split after it compounds: day 1 gets (1−1/80)×(1/2).
func TestFactorsCombined(t *testing.T) {
	dates := days("2022-01-03", "2022-01-04", "2022-01-06", "2022-01-10")
	closes := []float64{78, 80, 81, 42}
	events := []adjust.Event{
		{Date: day("2022-01-05"), Dividend: 1}, // previous close: 80 (01-04)
		{Date: day("2022-01-07"), SplitFactor: 2},
	}
	price, volume := adjust.Factors(dates, closes, events)
	div := 1 - 1.0/80
	checkFactors(t, price, volume, []float64{div * 0.5, div * 0.5, 0.5, 1}, []float64{2, 2, 2, 1})
	if got := adjust.Price(80, price[1]); got != 39.5 {
		t.Errorf("adj_close of 80 = %v, want 39.5 (80 × 0.9875 / 2)", got)
	}
}

func TestFactorsIgnoresEventsOutsideTheSeries(t *testing.T) {
	dates := days("2022-01-03", "2022-01-04")
	price, _ := adjust.Factors(dates, []float64{10, 11}, []adjust.Event{
		{Date: day("2022-01-03"), SplitFactor: 2}, // on the first bar: nothing earlier to adjust
		{Date: day("2021-12-01"), Dividend: 1},    // before the series
		{Date: day("2022-02-01"), Dividend: 20},   // not smaller than the previous close
	})
	if price[0] != 1 || price[1] != 1 {
		t.Fatalf("price factors %v, want all 1", price)
	}
}

func TestFactorsReverseSplit(t *testing.T) {
	dates := days("2022-01-03", "2022-01-04")
	price, volume := adjust.Factors(dates, []float64{1, 10}, []adjust.Event{{Date: day("2022-01-04"), SplitFactor: 0.1}})
	if price[0] != 10 || volume[0] != 0.1 {
		t.Fatalf("1:10 reverse split: %v/%v, want 10/0.1", price[0], volume[0])
	}
}

// A dividend with its source's ratio uses that ratio, not the close before
// the ex-date, which a series ending earlier does not hold.
func TestDividendRatioFromSource(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	dates := []time.Time{d("2003-09-18"), d("2003-09-19")}
	closes := []float64{29.50, 29.96}
	pf, _ := adjust.Factors(dates, closes, []adjust.Event{{Date: d("2003-10-15"), Dividend: 0.16, DividendRatio: 29.79 / 29.96}})
	if got := adjust.Price(29.96, pf[1]); got != 29.79 {
		t.Errorf("adj_close with the source's ratio = %v, want 29.79", got)
	}
	pf, _ = adjust.Factors(dates, closes, []adjust.Event{{Date: d("2003-10-15"), Dividend: 0.16}})
	if got := adjust.Price(29.96, pf[1]); got != 29.8 {
		t.Errorf("adj_close from the last close = %v, want 29.8 (29.96 × (1 − 0.16/29.96))", got)
	}
}
