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

// keysCommand is `notes-svc keys`: it opens the store and hands it to the
// subcommand, each in a file of its name. An unknown subcommand is
// reported without touching the database.
func keysCommand(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys needs a subcommand: create, list or revoke\n%s", usage)
	}
	sub, args := args[0], args[1:]
	run, ok := map[string]func(context.Context, keysCall) error{"create": keysCreate, "list": keysList, "revoke": keysRevoke}[sub]
	if !ok {
		return fmt.Errorf("unknown keys subcommand %q\n%s", sub, usage)
	}
	store, db, err := openStore(cfg, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return run(ctx, keysCall{store: store, cfg: cfg, args: args, stdout: stdout})
}

// keysCall is what a keys subcommand works with: the open store, the
// configuration, its arguments and stdout.
type keysCall struct {
	store  *notesdb.Store
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
