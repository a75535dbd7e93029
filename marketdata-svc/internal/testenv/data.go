package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// The small datasets below are the ones the tests of the reads and of the
// ingest both load: one place, so that each package's tests read the data
// the other's wrote.

// XNAS is the NASDAQ, as the seeds list it.
func XNAS() marketdata.Exchange {
	return marketdata.Exchange{MIC: "XNAS", Name: "NASDAQ Stock Exchange", Acronym: "NASDAQ", CountryCode: "US",
		Country: "USA", City: "New York", Website: "www.nasdaq.com", Timezone: "America/New_York", Currency: "USD"}
}

// XNYS is the New York Stock Exchange, as the seeds list it.
func XNYS() marketdata.Exchange {
	return marketdata.Exchange{MIC: "XNYS", Name: "New York Stock Exchange", Acronym: "NYSE", CountryCode: "US",
		Country: "USA", City: "New York", Website: "www.nyse.com", Timezone: "America/New_York", Currency: "USD"}
}

// Day is the date s (YYYY-MM-DD) at midnight UTC; it panics on a typo.
func Day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Seed loads AAA (XNAS) and BBB (XNYS) on five trading days, and the
// ticker NOEX without an exchange or bars; BBB misses 2024-01-03. Closes
// are 100+day for AAA and 200+day for BBB.
func Seed(t testing.TB, s *Stores) {
	t.Helper()
	var rows []ingest.BarRow
	for i, d := range []string{"2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"} {
		for _, sym := range []string{"AAA", "BBB"} {
			if sym == "BBB" && d == "2024-01-03" {
				continue
			}
			base := 100.0
			if sym == "BBB" {
				base = 200
			}
			c := base + float64(i)
			rows = append(rows, ingest.BarRow{Symbol: sym, Date: Day(d), Open: c - 1, High: c + 1, Low: c - 2, Close: c, Volume: 1000})
		}
	}
	_, err := s.Ingest.Apply(context.Background(), ingest.Load{
		Exchanges: []marketdata.Exchange{XNAS(), XNYS()},
		Tickers: []ingest.TickerRow{
			{Symbol: "AAA", Name: "Alpha Inc.", ExchangeMIC: "XNAS"},
			{Symbol: "BBB", Name: "Beta Corp.", ExchangeMIC: "XNYS"},
			{Symbol: "NOEX", Name: "No Exchange Ltd."},
		},
		Bars: ingest.Bars(rows),
	})
	if err != nil {
		t.Fatal(err)
	}
}

// NewYork is the America/New_York zone; it panics without the zone data.
func NewYork() *time.Location {
	l, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return l
}

// Minutes makes 1-minute bars of sym from local wall-clock start (New
// York), one a minute for n minutes: open = 100 + i, close = open + 0.5,
// high = open + 1, low = open - 1, volume = 10 + i; skip leaves minutes out.
func Minutes(sym, localStart string, n int, skip ...int) []ingest.IntradayRow {
	t0, err := time.ParseInLocation("2006-01-02 15:04", localStart, NewYork())
	if err != nil {
		panic(err)
	}
	var out []ingest.IntradayRow
	for i := range n {
		skipped := false
		for _, s := range skip {
			if s == i {
				skipped = true
			}
		}
		if skipped {
			continue
		}
		o := 100 + float64(i)
		out = append(out, ingest.IntradayRow{Symbol: sym, TS: t0.Add(time.Duration(i) * time.Minute),
			Open: o, High: o + 1, Low: o - 1, Close: o + 0.5, Volume: 10 + float64(i)})
	}
	return out
}

// SeedIntraday loads the tickers AAA and BBB (XNAS) and then rows.
func SeedIntraday(t testing.TB, s *Stores, rows []ingest.IntradayRow) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Exchanges: []marketdata.Exchange{XNAS()},
		Tickers: []ingest.TickerRow{{Symbol: "AAA", Name: "A", ExchangeMIC: "XNAS"}, {Symbol: "BBB", Name: "B", ExchangeMIC: "XNAS"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(rows)}); err != nil {
		t.Fatal(err)
	}
}
