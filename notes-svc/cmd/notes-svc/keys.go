package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
)

// keysCommand is `notes-svc keys`: it parses and checks the subcommand's
// arguments, each subcommand in a file of its name, then opens the store
// and runs it. A bad command line is reported without touching the
// database, so never with a driver's error.
func keysCommand(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys needs a subcommand: create, list or revoke\n%s", usage)
	}
	sub, args := args[0], args[1:]
	check, ok := map[string]func(keysCall) (keysAction, error){"create": keysCreate, "list": keysList, "revoke": keysRevoke}[sub]
	if !ok {
		return fmt.Errorf("unknown keys subcommand %q\n%s", sub, usage)
	}
	action, err := check(keysCall{cfg: cfg, args: args, stdout: stdout})
	if err != nil {
		return err
	}
	store, db, err := openStore(cfg, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return action(ctx, store)
}

// keysAction is a keys subcommand whose arguments have been checked.
type keysAction func(context.Context, *notesdb.Store) error

// keysCall is what a keys subcommand checks and prints with: the
// configuration, its arguments and stdout.
type keysCall struct {
	cfg    config.Config
	args   []string
	stdout io.Writer
}

// newKeysFlagSet returns the flag set of one keys subcommand. Its errors
// are reported with the whole usage, so the flag package prints nothing.
func newKeysFlagSet(sub string) *flag.FlagSet {
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
