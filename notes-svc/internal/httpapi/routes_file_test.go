package httpapi_test

import (
	"flag"
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/routetable"
)

// updateRoutes rewrites the route file instead of comparing it (make
// routes).
var updateRoutes = flag.Bool("update", false, "rewrite deploy/routes/notes-svc.txt from the router")

// routesFile is the route table the gateway, the ingress and make
// k8s-validate are checked against.
const routesFile = "../../../deploy/routes/notes-svc.txt"

// TestRoutesFile holds the router, as cmd/notes-svc wires it, to its
// checked-in route table, visibility included.
func TestRoutesFile(t *testing.T) {
	if err := routetable.Sync(routesFile, "notes-svc", newHarness(t).srv, *updateRoutes); err != nil {
		t.Fatal(err)
	}
}
