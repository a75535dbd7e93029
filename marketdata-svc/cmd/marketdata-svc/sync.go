package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/registry"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

const syncUsage = `usage: marketdata-svc sync --provider NAME [--symbols A,B,...|--exchange MIC|--all] [--from DATE] [--to DATE] [--concurrency N] [--lookback DAYS] [--refetch]
       marketdata-svc sync --provider edgar --cik CIK[,CIK]`

// syncData fetches daily bars, splits and dividends from a data provider
// and stores them through the importer's load path (internal/feed). Exit
// status: 0 every symbol synced, 3 some failed (listed), 1 nothing could
// be synced.
func syncData(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	fs := newFlagSet("sync", stdout)
	provider := fs.String("provider", "", "data provider: "+strings.Join(registry.Names, ", "))
	symbols := fs.String("symbols", "", "comma-separated symbols to sync")
	exchange := fs.String("exchange", "", "sync the symbols listed on this exchange (MIC); with eodhd, the whole exchange in one call a day")
	all := fs.Bool("all", false, "sync every symbol with end-of-day data")
	from := fs.String("from", "", "first day (YYYY-MM-DD); default: the day after each symbol's last stored bar")
	to := fs.String("to", "", "last day (YYYY-MM-DD); default: the last completed session in the exchange's time zone")
	backfill := fs.String("backfill-from", "2000-01-03", "first day of a symbol with nothing stored, without --from")
	lookback := fs.Int("lookback", 0, "re-fetch this many days before an incremental start, to take bars the provider restated")
	refetch := fs.Bool("refetch", false, "fetch the whole window again, even the days already synced (to take corrections)")
	concurrency := fs.Int("concurrency", cfg.Sync.Concurrency, "symbols fetched at once")
	ciks := fs.String("cik", "", "edgar: the companies (SEC Central Index Keys) whose documents to fetch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *provider == "edgar" || *ciks != "" {
		if *provider != "edgar" || *ciks == "" || *symbols != "" || *exchange != "" || *all || fs.NArg() > 0 {
			return errors.New(syncUsage)
		}
		return syncEDGAR(ctx, cfg, log, strings.Split(*ciks, ","), stdout)
	}
	modes := 0
	for _, set := range []bool{*symbols != "", *exchange != "", *all} {
		if set {
			modes++
		}
	}
	if *provider == "" || modes != 1 || fs.NArg() > 0 || *lookback < 0 || *lookback > 366 || *concurrency < 1 || *concurrency > 64 {
		return errors.New(syncUsage)
	}
	o := feed.Options{Exchange: strings.ToUpper(*exchange), All: *all, Lookback: *lookback, Refetch: *refetch, Concurrency: *concurrency}
	for s := range strings.SplitSeq(*symbols, ",") {
		if s = strings.ToUpper(strings.TrimSpace(s)); s != "" {
			o.Symbols = append(o.Symbols, s)
		}
	}
	var err error
	if o.From, err = optionalDate("from", *from); err != nil {
		return err
	}
	if o.To, err = optionalDate("to", *to); err != nil {
		return err
	}
	if o.BackfillFrom, err = optionalDate("backfill-from", *backfill); err != nil {
		return err
	}
	p, load, closeStore, err := openSync(ctx, cfg, func() (feed.Provider, error) { return registry.New(*provider, cfg.Sync, log, nil) })
	if err != nil {
		return err
	}
	defer closeStore()
	if o.To.IsZero() {
		mic := o.Exchange
		if mic == "" {
			mic = "XNYS"
		}
		tz, err := load.ExchangeTimezone(ctx, mic)
		if err != nil {
			return err
		}
		zone, err := time.LoadLocation(tz)
		if tz == "" || err != nil {
			zone, _ = time.LoadLocation("America/New_York")
		}
		o.To = feed.LastSession(time.Now(), zone)
	}
	if !o.From.IsZero() && o.From.After(o.To) {
		return fmt.Errorf("sync: --from %s is after --to %s", o.From.Format(time.DateOnly), o.To.Format(time.DateOnly))
	}
	o.Log = log
	o.Meter = &feed.Meter{Provider: p.Name(), Log: log, Every: 10 * time.Second}
	if f, ok := stdout.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			o.Meter.Terminal = stdout
		}
	}
	o.Publish = func(ctx context.Context, version int64) error { return publish(ctx, cfg, log, version) }
	start := time.Now()
	rep, err := feed.Run(ctx, p, load, o)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "%s: %d symbols (%d up to date), %d synced; %d bars received, %d stored, %d records refused, %d failed, in %s (%.0f rows/s)\n",
		rep.Provider, rep.Symbols, rep.UpToDate, rep.Synced, rep.Received, rep.Stored, len(rep.Rejects), len(rep.Failed),
		el.Round(time.Millisecond), float64(rep.Received)/max(el.Seconds(), 1e-9))
	for _, rj := range rep.Rejects {
		fmt.Fprintf(stdout, "refused: %s\n", rj)
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(stdout, "failed: %s: %s\n", f.Symbol, f.Reason)
	}
	switch code := rep.ExitCode(); {
	case rep.Fatal != nil:
		return &cmdmain.ExitError{Code: code, Err: fmt.Errorf("sync %s: %w", rep.Provider, rep.Fatal)}
	case code != feed.ExitOK:
		return &cmdmain.ExitError{Code: code, Err: fmt.Errorf("sync %s: %d of %d symbols failed", rep.Provider, len(rep.Failed), rep.Symbols)}
	}
	return nil
}

func optionalDate(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("sync: --%s: want YYYY-MM-DD, got %q", name, s)
	}
	return d, nil
}
