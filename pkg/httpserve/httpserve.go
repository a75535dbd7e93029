// Package httpserve runs a service's public HTTP server and its optional
// pprof listener, and shuts them down in the order both services need:
// readiness fails first, the server keeps serving for a drain period so
// that load balancers move away, then in-flight requests get a bounded
// time to finish.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Options says what Run serves and how it stops.
type Options struct {
	// Addr is the public listen address, such as ":8080".
	Addr string
	// Server carries the handler and the timeouts; its Addr is ignored.
	Server *http.Server
	// PprofAddr, when set, serves net/http/pprof on a listener of its own,
	// never on the public one.
	PprofAddr string
	// AdminAddr, when set, serves Admin (the admin API, pkg/adminapi) on a
	// listener of its own, never on the public one; it drains and stops
	// with the public server.
	AdminAddr string
	Admin     *http.Server
	// ShuttingDown is called as soon as the context ends, to make
	// readiness fail; it may be nil.
	ShuttingDown func()
	// Drain is how long the server keeps serving after ShuttingDown.
	Drain time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests.
	ShutdownTimeout time.Duration
	Log             *slog.Logger
}

// Run serves until ctx ends or a server fails, then shuts down as the
// package comment says. It returns nil after a clean shutdown.
func Run(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	errs := make(chan error, 3)
	go func() { errs <- o.Server.Serve(ln) }()
	o.Log.Info("listening", "addr", ln.Addr().String())

	var debug *http.Server
	if o.PprofAddr != "" {
		if debug, err = startPprof(o.PprofAddr, o.Log, errs); err != nil {
			_ = o.Server.Close()
			return err
		}
	}
	var admin *http.Server
	if o.AdminAddr != "" && o.Admin != nil {
		aln, err := net.Listen("tcp", o.AdminAddr)
		if err != nil {
			_ = o.Server.Close()
			if debug != nil {
				_ = debug.Close()
			}
			return fmt.Errorf("admin listener: %w", err)
		}
		admin = o.Admin
		go func() {
			if err := admin.Serve(aln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("admin: %w", err)
			}
		}()
		o.Log.Info("admin listening", "addr", aln.Addr().String())
	}

	select {
	case err := <-errs:
		_ = o.Server.Close()
		for _, s := range []*http.Server{debug, admin} {
			if s != nil {
				_ = s.Close()
			}
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if o.ShuttingDown != nil {
		o.ShuttingDown()
	}
	o.Log.Info("shutting down: readiness now fails", "drain", o.Drain.String())
	if o.Drain > 0 {
		time.Sleep(o.Drain)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	err = o.Server.Shutdown(shutdownCtx)
	for _, s := range []*http.Server{debug, admin} {
		if s != nil {
			_ = s.Shutdown(shutdownCtx)
		}
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	o.Log.Info("stopped")
	return nil
}

// startPprof serves net/http/pprof on addr; a failure after the start is
// sent to errs.
func startPprof(addr string, log *slog.Logger, errs chan<- error) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("pprof: %w", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return srv, nil
}
