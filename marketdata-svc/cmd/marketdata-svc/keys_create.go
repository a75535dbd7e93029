package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// keysCreate creates a key. It prints the plaintext key alone on the last
// line of stdout, so scripts can take it with tail -n1.
func keysCreate(l keysLine) (keysAction, error) {
	if *l.account == "" || len(l.args) > 0 {
		return nil, errors.New(keysUsage)
	}
	opts := marketdatadb.KeyOptions{RatePerSecond: *l.rate, MonthlyQuota: *l.quota}
	for _, s := range strings.Split(*l.scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			opts.Scopes = append(opts.Scopes, s)
		}
	}
	if *l.expiresIn < 0 {
		return nil, errors.New("keys create: --expires-in must not be negative")
	}
	return func(ctx context.Context, store *marketdatadb.Store) error {
		if *l.expiresIn > 0 {
			opts.ExpiresAt = time.Now().Add(*l.expiresIn).UTC()
		}
		plain, meta, err := store.CreateKey(ctx, *l.account, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(l.stdout, "created key %s for account %s (scopes %s, rate %s/s, monthly quota %s, expires %s)\n",
			meta.ID, meta.Account, strings.Join(meta.Scopes, ","), limitText(int64(meta.RatePerSecond)),
			limitText(meta.MonthlyQuota), timeText(meta.ExpiresAt))
		fmt.Fprintln(l.stdout, "the key is shown once; store it now:")
		fmt.Fprintln(l.stdout, plain)
		return nil
	}, nil
}
