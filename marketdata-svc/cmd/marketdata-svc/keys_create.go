package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// keysCreate creates a key. It prints the plaintext key alone on the last
// line of stdout, so scripts can take it with tail -n1.
func keysCreate(l keysLine) (keysAction, error) {
	if *l.account == "" {
		return nil, fmt.Errorf("keys create: --account NAME is required\n%s", keysUsage)
	}
	if len(l.args) > 0 {
		return nil, fmt.Errorf("keys create: unexpected argument %q\n%s", l.args[0], keysUsage)
	}
	if err := auth.CheckAccountName(*l.account); err != nil {
		return nil, fmt.Errorf("keys create: --account: %w", err)
	}
	scopes, err := auth.ParseScopes(*l.scopes, marketdatadb.AllScopes)
	if err != nil {
		return nil, fmt.Errorf("keys create: --scopes: %w", err)
	}
	if *l.rate < 0 || *l.rate > maxRatePerSecond {
		return nil, fmt.Errorf("keys create: --rate-per-second must be between 0 (no limit) and %d, got %d", maxRatePerSecond, *l.rate)
	}
	if *l.quota < 0 || *l.quota > maxMonthlyQuota {
		return nil, fmt.Errorf("keys create: --monthly-quota must be between 0 (no limit) and %d, got %d", int64(maxMonthlyQuota), *l.quota)
	}
	if err := auth.CheckKeyLifetime(*l.expiresIn); err != nil {
		return nil, fmt.Errorf("keys create: --expires-in %w", err)
	}
	opts := marketdatadb.KeyOptions{RatePerSecond: *l.rate, MonthlyQuota: *l.quota, Scopes: scopes}
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
