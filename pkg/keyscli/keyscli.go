// Package keyscli is the `keys` command of both services (create, list,
// revoke) on pkg/keystore: the same subcommands, flags, checks and output
// in each, the service adding only its scopes, its id form and, for
// marketdata-svc, the per-key limits.
//
// Every flag and argument is checked before the database is opened, so a
// bad command line is reported with a message naming what is wrong, never
// with a driver's error. `keys create` prints the plaintext key alone on
// the last line of its output, which scripts take with tail -n 1.
package keyscli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Options describe one service's keys command.
type Options struct {
	// Command is how the command is called, e.g. "notes-svc keys".
	Command string
	// Keys is the service's key configuration: scopes and id form.
	Keys keystore.Config
	// Limits offers --rate-per-second and --monthly-quota on create and
	// their columns in list.
	Limits bool
	// CacheTTL names the setting that bounds how long running replicas
	// keep accepting a revoked key, with its value, for revoke to say.
	CacheTTL string
	// Open opens the store once the command line has been checked; close
	// releases it.
	Open func(ctx context.Context) (store *keystore.Store, close func(), err error)
}

// action is a subcommand whose arguments have been checked.
type action func(context.Context, *keystore.Store) error

// line is one parsed command line: its flags, the arguments after them,
// and where the subcommand prints.
type line struct {
	flags
	args   []string
	o      Options
	stdout io.Writer
}

// flags are every flag of the keys subcommands.
type flags struct {
	account, name, scopes *string
	expiresIn             *time.Duration
	rate                  *int
	quota                 *int64
}

// subcommand is one keys subcommand: its check and the flags it takes.
type subcommand struct {
	name  string
	check func(line) (action, error)
	flags []string
}

func subcommands() []subcommand {
	return []subcommand{
		{"create", create, []string{"account", "name", "scopes", "expires-in", "rate-per-second", "monthly-quota"}},
		{"list", list, []string{"account"}},
		{"revoke", revoke, nil},
	}
}

// Usage returns the command's usage text.
func Usage(o Options) string {
	limits := ""
	if o.Limits {
		limits = " [--rate-per-second N] [--monthly-quota N]"
	}
	return fmt.Sprintf(`usage:
  %[1]s create --account NAME [--name TEXT] [--scopes %[2]s] [--expires-in DURATION]%[3]s
  %[1]s list [--account NAME]
  %[1]s revoke KEY_ID`, o.Command, strings.Join(o.Keys.DefaultScopes, ","), limits)
}

// Run runs the keys command line args: it checks the subcommand's flags
// and arguments, then opens the store and runs it.
func Run(ctx context.Context, o Options, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys needs a subcommand: create, list or revoke\n%s", Usage(o))
	}
	sub, rest := args[0], args[1:]
	subs := subcommands()
	i := slices.IndexFunc(subs, func(s subcommand) bool { return s.name == sub })
	if i < 0 {
		return fmt.Errorf("unknown keys subcommand %q\n%s", sub, Usage(o))
	}
	fs, fl := newFlagSet(o, sub, stdout)
	if err := fs.Parse(rest); err != nil {
		return fmt.Errorf("keys %s: %w\n%s", sub, err, Usage(o))
	}
	var refused error
	fs.Visit(func(f *flag.Flag) {
		if refused == nil && !slices.Contains(subs[i].flags, f.Name) {
			refused = fmt.Errorf("keys %s: --%s applies to %s only\n%s", sub, f.Name, takers(f.Name), Usage(o))
		}
	})
	if refused != nil {
		return refused
	}
	act, err := subs[i].check(line{flags: fl, args: fs.Args(), o: o, stdout: stdout})
	if err != nil {
		return err
	}
	store, closeStore, err := o.Open(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	// The keys command is the break-glass path: its changes are audited
	// like the admin API's, under the name "cli".
	return act(ctx, store.As(keystore.ActorCLI))
}

// takers names the subcommands that take the flag name.
func takers(name string) string {
	var out []string
	for _, s := range subcommands() {
		if slices.Contains(s.flags, name) {
			out = append(out, "keys "+s.name)
		}
	}
	return strings.Join(out, " and ")
}

// newFlagSet defines every keys flag on each subcommand, so that -h lists
// them all; Run refuses those the subcommand does not take. A bad flag is
// an error Run returns, never an exit, and -h prints to stdout.
func newFlagSet(o Options, sub string, stdout io.Writer) (*flag.FlagSet, flags) {
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stdout)
	f := flags{
		account:   fs.String("account", "", "account name (created by keys create if new; keys list: only this account)"),
		name:      fs.String("name", "", "a name for the key, for people (optional)"),
		scopes:    fs.String("scopes", strings.Join(o.Keys.DefaultScopes, ","), "comma-separated scopes, of "+strings.Join(o.Keys.Scopes, ",")),
		expiresIn: fs.Duration("expires-in", 0, "lifetime of the key, e.g. 720h (0: never expires)"),
		rate:      new(int),
		quota:     new(int64),
	}
	if o.Limits {
		fs.IntVar(f.rate, "rate-per-second", 0, fmt.Sprintf("requests per second allowed, up to %d (0: no limit)", keystore.MaxRatePerSecond))
		fs.Int64Var(f.quota, "monthly-quota", 0, fmt.Sprintf("requests per calendar month allowed, up to %d (0: no limit)", int64(keystore.MaxMonthlyQuota)))
	}
	return fs, f
}

// create is `keys create`.
func create(l line) (action, error) {
	usage := Usage(l.o)
	if *l.account == "" {
		return nil, fmt.Errorf("keys create: --account NAME is required\n%s", usage)
	}
	if len(l.args) > 0 {
		return nil, fmt.Errorf("keys create: unexpected argument %q\n%s", l.args[0], usage)
	}
	if err := auth.CheckAccountName(*l.account); err != nil {
		return nil, fmt.Errorf("keys create: --account: %w", err)
	}
	if err := keystore.CheckKeyName(*l.name); err != nil {
		return nil, fmt.Errorf("keys create: --name: %w", err)
	}
	scopes, err := auth.ParseScopes(*l.scopes, l.o.Keys.Scopes)
	if err != nil {
		return nil, fmt.Errorf("keys create: --scopes: %w", err)
	}
	if *l.rate < 0 || *l.rate > keystore.MaxRatePerSecond {
		return nil, fmt.Errorf("keys create: --rate-per-second must be between 0 (no limit) and %d, got %d", keystore.MaxRatePerSecond, *l.rate)
	}
	if *l.quota < 0 || *l.quota > keystore.MaxMonthlyQuota {
		return nil, fmt.Errorf("keys create: --monthly-quota must be between 0 (no limit) and %d, got %d", int64(keystore.MaxMonthlyQuota), *l.quota)
	}
	if err := auth.CheckKeyLifetime(*l.expiresIn); err != nil {
		return nil, fmt.Errorf("keys create: --expires-in %w", err)
	}
	opts := keystore.KeyOptions{Name: *l.name, Scopes: scopes, RatePerSecond: *l.rate, MonthlyQuota: *l.quota}
	return func(ctx context.Context, store *keystore.Store) error {
		if *l.expiresIn > 0 {
			opts.ExpiresAt = time.Now().Add(*l.expiresIn)
		}
		key, plain, err := store.CreateKey(ctx, *l.account, opts)
		if err != nil {
			return err
		}
		w := l.stdout
		fmt.Fprintf(w, "account: %s (%s)\nkey id: %s\n", key.Account, key.AccountID, key.ID)
		if key.Name != "" {
			fmt.Fprintf(w, "name: %s\n", key.Name)
		}
		fmt.Fprintf(w, "scopes: %s\n", strings.Join(key.Scopes, ","))
		if l.o.Limits {
			fmt.Fprintf(w, "rate per second: %s\nmonthly quota: %s\n", limitText(int64(key.RatePerSecond)), limitText(key.MonthlyQuota))
		}
		fmt.Fprintf(w, "expires: %s\n", timeText(key.ExpiresAt))
		fmt.Fprintln(w, "The key is shown once, on the next line. Store it now.")
		fmt.Fprintln(w, plain)
		return nil
	}, nil
}

// list is `keys list`.
func list(l line) (action, error) {
	if len(l.args) > 0 {
		return nil, fmt.Errorf("keys list: unexpected argument %q\n%s", l.args[0], Usage(l.o))
	}
	if *l.account != "" {
		if err := auth.CheckAccountName(*l.account); err != nil {
			return nil, fmt.Errorf("keys list: --account: %w", err)
		}
	}
	return func(ctx context.Context, store *keystore.Store) error {
		keys, err := store.ListKeys(ctx, *l.account)
		if err != nil {
			return err
		}
		return printKeys(l.stdout, keys, l.o.Limits)
	}, nil
}

// printKeys writes keys as a table, the limit columns when limits.
// Text from the database is printed through auth.Printable: a name stored
// before names were checked, with a newline or an escape sequence in it,
// shows quoted instead of breaking or forging rows.
func printKeys(w io.Writer, keys []keystore.Key, limits bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"KEY ID", "ACCOUNT", "NAME", "HINT", "SCOPES"}
	if limits {
		head = append(head, "RATE/S", "MONTHLY")
	}
	fmt.Fprintln(tw, strings.Join(append(head, "CREATED", "EXPIRES", "REVOKED", "LAST USED"), "\t"))
	for _, k := range keys {
		name := "-"
		if k.Name != "" {
			name = auth.Printable(k.Name)
		}
		row := []string{auth.Printable(k.ID), auth.Printable(k.Account), name, auth.Printable(k.Hint), auth.Printable(strings.Join(k.Scopes, ","))}
		if limits {
			row = append(row, limitText(int64(k.RatePerSecond)), limitText(k.MonthlyQuota))
		}
		row = append(row, k.CreatedAt.UTC().Format(time.RFC3339), timeText(k.ExpiresAt), timeText(k.RevokedAt), timeText(k.LastUsedAt))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// revoke is `keys revoke`. Replicas keep accepting the key until their
// cache entry expires, which the output says.
func revoke(l line) (action, error) {
	if len(l.args) != 1 {
		return nil, fmt.Errorf("keys revoke: give exactly one KEY_ID\n%s", Usage(l.o))
	}
	id := l.args[0]
	if !l.o.Keys.ValidID(id) {
		return nil, fmt.Errorf("keys revoke: %s is not a key id (%s, as keys list shows)", strconv.Quote(id), l.o.Keys.IDForm)
	}
	return func(ctx context.Context, store *keystore.Store) error {
		if err := store.RevokeKey(ctx, id, time.Now()); err != nil {
			if errors.Is(err, keystore.ErrKeyNotFound) {
				return fmt.Errorf("keys revoke: no key %s", id)
			}
			return fmt.Errorf("keys revoke %s: %w", id, err)
		}
		fmt.Fprintf(l.stdout, "revoked key %s; replicas that cached it stop accepting it within %s\n", id, l.o.CacheTTL)
		return nil
	}, nil
}

func limitText(n int64) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
