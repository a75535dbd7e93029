package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysCreate creates a key. It prints the plaintext key alone on the last
// line of stdout, so scripts can take it with tail -n1.
func keysCreate(fs *flag.FlagSet, flags keysFlags, stdout io.Writer) (keysAction, error) {
	if *flags.account == "" || fs.NArg() > 0 {
		return nil, errors.New(keysUsage)
	}
	opts := marketdatadb.KeyOptions{RatePerSecond: *flags.rate, MonthlyQuota: *flags.quota}
	for _, s := range strings.Split(*flags.scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			opts.Scopes = append(opts.Scopes, s)
		}
	}
	if *flags.expiresIn < 0 {
		return nil, errors.New("keys create: --expires-in must not be negative")
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		if *flags.expiresIn > 0 {
			opts.ExpiresAt = time.Now().Add(*flags.expiresIn).UTC()
		}
		plain, meta, err := store.CreateKey(ctx, *flags.account, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created key %s for account %s (scopes %s, rate %s/s, monthly quota %s, expires %s)\n",
			meta.ID, meta.Account, strings.Join(meta.Scopes, ","), limitText(int64(meta.RatePerSecond)),
			limitText(meta.MonthlyQuota), timeText(meta.ExpiresAt))
		fmt.Fprintln(stdout, "the key is shown once; store it now:")
		fmt.Fprintln(stdout, plain)
		return nil
	}, nil
}
