package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

const keysUsage = `usage:
  marketdata-svc keys create --account NAME [--rate-per-second N] [--monthly-quota N] [--scopes eod,tickers,...] [--expires-in DURATION]
  marketdata-svc keys list
  marketdata-svc keys revoke KEY_ID`

// keys administers API keys. create prints the plaintext key alone on the
// last line of stdout, so scripts can take it with tail -n1.
func keys(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stdout)
	var (
		account    = fs.String("account", "", "account name (created on first use)")
		rate       = fs.Int("rate-per-second", 0, "requests per second allowed (0: no limit)")
		quota      = fs.Int64("monthly-quota", 0, "requests per calendar month allowed (0: no limit)")
		scopes     = fs.String("scopes", "", "comma-separated scopes (default all: "+strings.Join(marketdatadb.AllScopes, ",")+")")
		expiresIn  = fs.Duration("expires-in", 0, "lifetime of the key, e.g. 720h (0: never expires)")
		openAndRun = func(f func(*marketdatadb.Store) error) error {
			store, err := marketdatadb.Open(ctx, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Migrate(ctx); err != nil {
				return err
			}
			return f(store)
		}
	)
	switch sub {
	case "create":
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if *account == "" || fs.NArg() > 0 {
			return errors.New(keysUsage)
		}
		opts := marketdatadb.KeyOptions{RatePerSecond: *rate, MonthlyQuota: *quota}
		for _, s := range strings.Split(*scopes, ",") {
			if s = strings.TrimSpace(s); s != "" {
				opts.Scopes = append(opts.Scopes, s)
			}
		}
		if *expiresIn < 0 {
			return errors.New("keys create: --expires-in must not be negative")
		}
		if *expiresIn > 0 {
			opts.ExpiresAt = time.Now().Add(*expiresIn).UTC()
		}
		return openAndRun(func(s *marketdatadb.Store) error {
			plain, meta, err := s.CreateKey(ctx, *account, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "created key %s for account %s (scopes %s, rate %s/s, monthly quota %s, expires %s)\n",
				meta.ID, meta.Account, strings.Join(meta.Scopes, ","), limitText(int64(meta.RatePerSecond)),
				limitText(meta.MonthlyQuota), timeText(meta.ExpiresAt))
			fmt.Fprintln(stdout, "the key is shown once; store it now:")
			fmt.Fprintln(stdout, plain)
			return nil
		})
	case "list":
		if err := fs.Parse(rest); err != nil {
			return err
		}
		return openAndRun(func(s *marketdatadb.Store) error {
			list, err := s.ListKeys(ctx)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tACCOUNT\tHINT\tSCOPES\tRATE/S\tMONTHLY\tCREATED\tEXPIRES\tREVOKED\tLAST USED")
			for _, k := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Account, k.Hint,
					strings.Join(k.Scopes, ","), limitText(int64(k.RatePerSecond)), limitText(k.MonthlyQuota),
					timeText(k.CreatedAt), timeText(k.ExpiresAt), timeText(k.RevokedAt), timeText(k.LastUsedAt))
			}
			return w.Flush()
		})
	case "revoke":
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New(keysUsage)
		}
		return openAndRun(func(s *marketdatadb.Store) error {
			if err := s.RevokeKey(ctx, fs.Arg(0)); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "revoked key", fs.Arg(0))
			return nil
		})
	default:
		return fmt.Errorf("unknown keys command %q\n%s", sub, keysUsage)
	}
}

func limitText(n int64) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
