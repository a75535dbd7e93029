// Command marketdata-svc serves end-of-day prices and tickers in
// marketstack's conventions (v1 and v2), and imports, generates and migrates the data
// behind them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// Exchanges' time zones are described from the time zone database,
	// which a FROM scratch image does not have: it is built in.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketdata-svc:", err)
		os.Exit(1)
	}
}
