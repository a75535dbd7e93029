// Command marketdata-svc serves end-of-day prices and tickers in
// marketstack's conventions (v1 and v2), and imports, generates and migrates the data
// behind them.
package main

import (
	// Exchanges' time zones are described from the time zone database,
	// which a FROM scratch image does not have: it is built in.
	_ "time/tzdata"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	cmdmain.Run("marketdata-svc", run)
}
