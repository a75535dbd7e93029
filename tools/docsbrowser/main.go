// Command docsbrowser checks the services' interactive API references in a
// real browser: for each service it loads /docs in headless Chromium,
// compares the operations Swagger UI renders with those of the OpenAPI
// documents the service serves, authorizes with a demo key, runs one
// operation with "Try it out" and "Execute", expects a 200 answer with data,
// and saves a screenshot. scripts/docs-browser.sh (make docs-browser)
// starts the services and runs it.
package main

import "github.com/tickerdesk/tickerdesk/pkg/cmdmain"

func main() {
	cmdmain.Run("docsbrowser", run)
}
