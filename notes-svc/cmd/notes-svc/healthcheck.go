package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks the server running beside it whether it is ready. It
// exists for container health checks: the image has no shell or curl.
func healthcheck(ctx context.Context, httpAddr string, stdout io.Writer) error {
	_, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
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
