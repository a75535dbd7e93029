package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	generator "github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
)

const generateIntradayUsage = `usage: marketdata-svc generate --intraday (--tickers SYM,SYM | --symbols N) [--days D] [--seed S]`

// generateIntraday makes deterministic synthetic 1-minute bars for the last
// --days daily bars in the store of each symbol (named, or the first N
// synthetic ones), over its exchange's regular session in the exchange's
// zone, agreeing with each daily bar; loading them again changes nothing.
func generateIntraday(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := newFlagSet("generate", stdout)
	fs.Bool("intraday", true, "generate 1-minute bars from the stored daily bars")
	tickers := fs.String("tickers", "", "comma-separated symbols whose daily bars get minutes")
	symbols := fs.Int("symbols", 0, "the first N synthetic symbols (SYN000001...) instead of --tickers")
	days := fs.Int("days", 5, "last trading days of each symbol")
	seed := fs.Uint64("seed", 1, "random seed; the same seed gives the same minutes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var syms []string
	switch {
	case *tickers != "" && *symbols == 0:
		var err error
		if syms, err = marketdata.ParseSymbols(*tickers); err != nil {
			return fmt.Errorf("generate: --tickers: %w", err)
		}
	case *tickers == "" && *symbols > 0:
		syms = generator.Symbols(*symbols)
	default:
		return errors.New(generateIntradayUsage)
	}
	if *days < 1 || fs.NArg() > 0 {
		return errors.New(generateIntradayUsage)
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	// The days to fill are read as the API reads them, the minutes loaded
	// as an import loads them.
	reader, load := reads.New(store.DB()), ingest.New(store.DB())
	start := time.Now()
	var total ingest.LoadResult
	ndays := 0
	// Batches of symbols, a transaction each: 50 million minutes in one
	// transaction would stage them all in one temporary table first. Each
	// batch is idempotent, so a run that stops half-way is simply rerun.
	for i := 0; i < len(syms); i += generateIntradayBatch {
		batch := syms[i:min(i+generateIntradayBatch, len(syms))]
		sdays, err := sessionDays(ctx, reader, batch, *days)
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		ndays += len(sdays)
		src := generator.NewIntradaySource(*seed, sdays)
		res, err := load.ApplyIntraday(ctx, ingest.IntradayLoad{Rows: func() (ingest.IntradaySource, error) { return src, nil }})
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		total.BarsRead += res.BarsRead
		total.BarsChanged += res.BarsChanged
		if res.Changed() {
			total.Version = res.Version
		}
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "generate: %d synthetic minutes of %d days of %d symbols in %s (%.0f rows/s); %d changed, version %d\n",
		total.BarsRead, ndays, len(syms), el.Round(time.Millisecond), float64(total.BarsRead)/el.Seconds(), total.BarsChanged, total.Version)
	return publish(ctx, cfg, log, total.Version)
}

// generateIntradayBatch is how many symbols' minutes one transaction loads.
const generateIntradayBatch = 50

// sessionDays reads each symbol's last days daily bars with its exchange's
// session and zone.
func sessionDays(ctx context.Context, store *reads.Store, syms []string, days int) ([]generator.SessionDay, error) {
	var out []generator.SessionDay
	for _, sym := range syms {
		t, err := store.Ticker(ctx, sym)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sym, err)
		}
		zone, mic := time.UTC, ""
		if t.Exchange != nil {
			mic = t.Exchange.MIC
			if t.Exchange.Timezone != "" {
				if zone, err = time.LoadLocation(t.Exchange.Timezone); err != nil {
					return nil, fmt.Errorf("%s: exchange %s: %w", sym, mic, err)
				}
			}
		}
		page, err := store.EOD(ctx, marketdata.EODQuery{Symbols: []string{sym}, Sort: marketdata.SortAsc, Limit: 0})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sym, err)
		}
		bars := page.Bars[max(0, len(page.Bars)-days):]
		for _, b := range bars {
			out = append(out, generator.SessionDay{Day: generator.DayBar{Symbol: sym, Date: b.Date, Open: b.Open, High: b.High,
				Low: b.Low, Close: b.Close, Volume: b.Volume}, Session: marketdata.SessionOf(mic), Zone: zone})
		}
	}
	return out, nil
}

// isIntradayGenerate reports whether generate's arguments ask for minutes.
func isIntradayGenerate(args []string) bool {
	for _, a := range args {
		if a == "--intraday" || a == "-intraday" || strings.HasPrefix(a, "--intraday=") || strings.HasPrefix(a, "-intraday=") {
			return a != "--intraday=false" && a != "-intraday=false"
		}
	}
	return false
}
