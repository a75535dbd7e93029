package demo

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// IntradaySeries are the demo symbols with synthetic 1-minute bars, and
// IntradayDays how many of their last trading days get them. The bars are
// generated (package generate), not real: docs/DATA.md says so.
var (
	IntradaySeries = []string{"GOOG", "MSFT"}
	IntradayDays   = 3
)

// IntradaySeed is the seed of the demo's synthetic minutes.
const IntradaySeed = 1

// Store is what loading the demo needs: the EOD load, the intraday one
// and the v2 datasets'.
type Store interface {
	importer.Applier
	importer.IntradayApplier
	importer.DatasetApplier
}

// IntradayDaysOf returns the last IntradayDays daily bars of a bundled
// series, oldest first.
func IntradayDaysOf(symbol string) ([]generate.DayBar, error) {
	for _, s := range Series {
		if s.Symbol != symbol {
			continue
		}
		p, err := openSeries(s.File, s.Symbol)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		var all []generate.DayBar
		for p.Next() {
			b := p.Bar()
			all = append(all, generate.DayBar{Symbol: b.Symbol, Date: b.Date, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume})
		}
		if err := p.Err(); err != nil {
			return nil, err
		}
		sort.Slice(all, func(i, j int) bool { return all[i].Date.Before(all[j].Date) })
		return all[max(0, len(all)-IntradayDays):], nil
	}
	return nil, fmt.Errorf("no bundled series of %s", symbol)
}

// intradayRows generates the demo's minute bars on its symbols' exchange
// (XNAS) sessions.
func intradayRows() ([]ingest.IntradayRow, error) {
	zone, err := time.LoadLocation("America/New_York")
	if err != nil {
		return nil, err
	}
	var rows []ingest.IntradayRow
	for _, sym := range IntradaySeries {
		days, err := IntradayDaysOf(sym)
		if err != nil {
			return nil, err
		}
		for _, d := range days {
			rows = append(rows, generate.Minutes(IntradaySeed, d, marketdata.SessionOf("XNAS"), zone)...)
		}
	}
	return rows, nil
}

func loadIntraday(ctx context.Context, store importer.IntradayApplier) (ingest.LoadResult, error) {
	rows, err := intradayRows()
	if err != nil {
		return ingest.LoadResult{}, fmt.Errorf("load demo intraday: %w", err)
	}
	res, err := store.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: ingest.IntradayRows(rows)})
	if err != nil {
		return res, fmt.Errorf("load demo intraday: %w", err)
	}
	return res, nil
}
