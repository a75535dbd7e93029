// Command notes-svc serves the Tickerdesk notes API and administers its
// database: migrations and API keys.
package main

import "github.com/tickerdesk/tickerdesk/pkg/cmdmain"

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	cmdmain.Run("notes-svc", run)
}
