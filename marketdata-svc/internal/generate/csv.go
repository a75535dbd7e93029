package generate

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Files names the CSV files WriteCSV writes, in the order to import them.
var Files = []string{"exchanges.csv", "tickers.csv", "prices.csv", "splits.csv", "dividends.csv"}

// WriteCSV writes the dataset to dir as importable CSV files and returns
// the number of price rows. Splits and dividends go to their own files, so
// that prices.csv is the raw layout "symbol,date,open,high,low,close,volume".
func WriteCSV(dir string, opts Options) (int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	write := func(name string, header []string, rows func(w *csv.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		w := csv.NewWriter(bw)
		if err := w.Write(header); err != nil {
			f.Close()
			return err
		}
		if err := rows(w); err != nil {
			f.Close()
			return err
		}
		w.Flush()
		if err := w.Error(); err != nil {
			f.Close()
			return err
		}
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	tickers := tickersOf(opts)
	err := write("exchanges.csv", []string{"mic", "name", "acronym", "country_code", "country", "city", "website", "timezone", "currency"},
		func(w *csv.Writer) error {
			for _, e := range exchangesOf(opts) {
				if err := w.Write([]string{e.MIC, e.Name, e.Acronym, e.CountryCode, e.Country, e.City, e.Website, e.Timezone, e.Currency}); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return 0, fmt.Errorf("write csv: %w", err)
	}
	err = write("tickers.csv", []string{"symbol", "name", "exchange", "asset_type", "price_currency"}, func(w *csv.Writer) error {
		for _, t := range tickers {
			if err := w.Write([]string{t.Symbol, t.Name, t.ExchangeMIC, t.AssetType, t.PriceCurrency}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("write csv: %w", err)
	}
	var n int64
	var splits, divs [][]string
	err = write("prices.csv", []string{"symbol", "date", "open", "high", "low", "close", "volume"}, func(w *csv.Writer) error {
		src := newSource(opts, barSymbols(opts, tickers))
		rec := make([]string, 7)
		for src.Next() {
			b := src.Bar()
			date := b.Date.Format(time.DateOnly)
			rec[0], rec[1], rec[2], rec[3] = b.Symbol, date, num(b.Open), num(b.High)
			rec[4], rec[5], rec[6] = num(b.Low), num(b.Close), num(b.Volume)
			if err := w.Write(rec); err != nil {
				return err
			}
			n++
			if b.SplitFactor != 0 {
				splits = append(splits, []string{b.Symbol, date, num(b.SplitFactor)})
			}
			if b.Dividend != 0 {
				divs = append(divs, []string{b.Symbol, date, num(b.Dividend)})
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("write csv: %w", err)
	}
	if err := write("splits.csv", []string{"symbol", "date", "factor"}, func(w *csv.Writer) error { return w.WriteAll(splits) }); err != nil {
		return 0, fmt.Errorf("write csv: %w", err)
	}
	if err := write("dividends.csv", []string{"symbol", "date", "amount"}, func(w *csv.Writer) error { return w.WriteAll(divs) }); err != nil {
		return 0, fmt.Errorf("write csv: %w", err)
	}
	return n, nil
}
