// Command marketdata-svc serves end-of-day prices and tickers in
// marketstack v1's conventions, and imports, generates and migrates the data
// behind them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
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
