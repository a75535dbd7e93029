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
	fs, flags := newKeysFlagSet(sub, stdout)
	if err := fs.Parse(rest); err != nil {
		return err
	}
	line := keysLine{keysFlags: flags, args: fs.Args(), stdout: stdout}
	var action keysAction
	var err error
	switch sub {
	case "create":
		action, err = keysCreate(line)
	case "list":
		action, err = keysList(line)
	case "revoke":
		action, err = keysRevoke(line)
	default:
		return fmt.Errorf("unknown keys command %q\n%s", sub, keysUsage)
	}
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
// prints with: the options, the arguments left after them, and stdout.
type keysLine struct {
	keysFlags
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
// set always did: list and revoke accept and ignore create's flags, and
// their -h lists them.
func newKeysFlagSet(sub string, stdout io.Writer) (*flag.FlagSet, keysFlags) {
	fs := newFlagSet("keys "+sub, stdout)
	return fs, keysFlags{
		account:   fs.String("account", "", "account name (created on first use)"),
		rate:      fs.Int("rate-per-second", 0, "requests per second allowed (0: no limit)"),
		quota:     fs.Int64("monthly-quota", 0, "requests per calendar month allowed (0: no limit)"),
		scopes:    fs.String("scopes", "", "comma-separated scopes (default all: "+strings.Join(marketdatadb.AllScopes, ",")+")"),
		expiresIn: fs.Duration("expires-in", 0, "lifetime of the key, e.g. 720h (0: never expires)"),
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
