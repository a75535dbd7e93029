package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

const keysUsage = `usage:
  marketdata-svc keys create --account NAME [--rate-per-second N] [--monthly-quota N] [--scopes eod,tickers,...] [--expires-in DURATION]
  marketdata-svc keys list
  marketdata-svc keys revoke KEY_ID`

// keys administers API keys: it parses and checks one keys subcommand,
// then opens the store once and runs it.
func keys(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	sub, rest := args[0], args[1:]
	var check func(keysLine) (keysAction, error)
	switch sub {
	case "create":
		check = keysCreate
	case "list":
		check = keysList
	case "revoke":
		check = keysRevoke
	default:
		return fmt.Errorf("unknown keys command %q\n%s", sub, keysUsage)
	}
	fs, flags := newKeysFlagSet(sub, stdout)
	if err := fs.Parse(rest); err != nil {
		return fmt.Errorf("keys %s: %w\n%s", sub, err, keysUsage)
	}
	line := keysLine{keysFlags: flags, set: map[string]bool{}, args: fs.Args(), stdout: stdout}
	fs.Visit(func(f *flag.Flag) { line.set[f.Name] = true })
	if sub != "create" {
		for name := range line.set {
			return fmt.Errorf("keys %s: --%s applies to keys create only\n%s", sub, name, keysUsage)
		}
	}
	// Every argument is checked here, before the database: a bad one
	// gets a message naming it, never a driver's error.
	action, err := check(line)
	if err != nil {
		return err
	}
	store, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return action(ctx, store)
}

// keysAction is a keys subcommand whose arguments have been checked: a
// usage error never needs the database.
type keysAction func(context.Context, *marketdatadb.Store) error

// keysLine is one parsed keys command line, all a subcommand checks and
// prints with: the options, which of them were given, the arguments left
// after them, and stdout.
type keysLine struct {
	keysFlags
	set    map[string]bool
	args   []string
	stdout io.Writer
}

// keysFlags are the options of keys create.
type keysFlags struct {
	account   *string
	rate      *int
	quota     *int64
	scopes    *string
	expiresIn *time.Duration
}

// newKeysFlagSet defines every keys flag on each subcommand, as one flag
// set always did, so that their -h lists them; list and revoke refuse
// create's flags when given.
func newKeysFlagSet(sub string, stdout io.Writer) (*flag.FlagSet, keysFlags) {
	fs := newFlagSet("keys "+sub, stdout)
	return fs, keysFlags{
		account:   fs.String("account", "", "account name (created on first use)"),
		rate:      fs.Int("rate-per-second", 0, fmt.Sprintf("requests per second allowed, up to %d (0: no limit)", maxRatePerSecond)),
		quota:     fs.Int64("monthly-quota", 0, fmt.Sprintf("requests per calendar month allowed, up to %d (0: no limit)", maxMonthlyQuota)),
		scopes:    fs.String("scopes", strings.Join(marketdatadb.AllScopes, ","), "comma-separated scopes"),
		expiresIn: fs.Duration("expires-in", 0, "lifetime of the key, e.g. 720h (0: never expires)"),
	}
}

// Limits a key command accepts: far above any plan, far below what the
// columns hold, so that a typo is refused with this message rather than
// by the database.
const (
	maxRatePerSecond = 1_000_000
	maxMonthlyQuota  = 1_000_000_000_000
)

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
