// Package healthcheck is the health-check subcommand both service binaries
// carry: their images are FROM scratch, with no shell or curl, so the
// container runtime runs the binary itself to ask the server beside it
// whether it is ready.
package healthcheck

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Timeout bounds the whole check, below the runtimes' usual probe timeout.
const Timeout = 2 * time.Second

// Check asks the server listening on httpAddr's port, on the loopback
// address, for GET /readyz, and succeeds (printing "ready") only on a 200.
func Check(ctx context.Context, httpAddr string, stdout io.Writer) error {
	_, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort("127.0.0.1", port)+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: /readyz answered %d", resp.StatusCode)
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}
