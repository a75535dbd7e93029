// Package cmdmain is the main function of every Tickerdesk command: the
// services, the benchmark and the tools. A command's main only calls Run, so
// that each of them stops the same way: SIGINT or SIGTERM cancels the
// context run is given (Kubernetes' graceful shutdown relies on it), and an
// error is one "name: err" line on stderr and exit status 1.
package cmdmain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// RunFunc is a command's run: its arguments without the program name, its
// environment and its standard output are parameters, so tests call it
// directly with their own.
type RunFunc func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error

// Run runs run with a context cancelled by SIGINT or SIGTERM, os.Args[1:],
// os.Getenv and os.Stdout, and exits with status 1 after printing
// "name: err" to stderr when run fails (with ExitError's code when the
// error is one). It returns when run succeeds.
func Run(name string, run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	// A second signal from here on ends the process at once, as Go's
	// default handling does.
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		code := 1
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code > 1 {
			code = ee.Code
		}
		os.Exit(code)
	}
}

// ExitError is a failure that exits with Code instead of 1, for a command
// whose status tells its scheduler more (marketdata-svc sync exits 3 when
// some symbols failed and the others were stored).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Command splits a service's arguments into its command (defaultCommand
// when none is given) and the command's own arguments, and answers the two
// commands every service shares, so that they are spelled alike in all of
// them: version (--version, -version) prints "name version", help (--help,
// -help, -h) prints usage. done reports that one of those was answered.
func Command(args []string, defaultCommand, name, version, usage string, stdout io.Writer) (cmd string, rest []string, done bool) {
	cmd, rest = defaultCommand, args
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, name, version)
		return cmd, rest, true
	case "help", "--help", "-help", "-h":
		fmt.Fprintln(stdout, usage)
		return cmd, rest, true
	}
	return cmd, rest, false
}
