package httpserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func get(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestServesThenShutsDownInOrder: requests and pprof are served; when the
// context ends readiness is failed first, Run returns nil, and nothing
// listens any more.
func TestServesThenShutsDownInOrder(t *testing.T) {
	addr, pprofAddr := freeAddr(t), freeAddr(t)
	var shuttingDown atomic.Bool
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if shuttingDown.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	var logs logbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Addr: addr, Server: &http.Server{Handler: handler, ReadHeaderTimeout: time.Second}, PprofAddr: pprofAddr,
			ShuttingDown: func() { shuttingDown.Store(true) }, ShutdownTimeout: 5 * time.Second,
			Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		})
	}()
	for !strings.Contains(logs.String(), "pprof listening") {
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if code := get(t, "http://"+addr+"/"); code != http.StatusOK {
		t.Fatalf("before shutdown: %d", code)
	}
	if code := get(t, "http://"+pprofAddr+"/debug/pprof/"); code != http.StatusOK {
		t.Fatalf("pprof: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if !shuttingDown.Load() || !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("readiness not failed or no stop logged:\n%s", logs.String())
	}
	for _, a := range []string{addr, pprofAddr} {
		if c, err := net.Dial("tcp", a); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections", a)
		}
	}
}

// TestListenFailures: a busy public or pprof address is an error at start,
// not a server left running.
func TestListenFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := func() *http.Server {
		return &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	}
	if err := Run(context.Background(), Options{Addr: busy.Addr().String(), Server: srv(), Log: log}); err == nil || !strings.HasPrefix(err.Error(), "listen: ") {
		t.Errorf("busy address: %v", err)
	}
	s := srv()
	err = Run(context.Background(), Options{Addr: "127.0.0.1:0", Server: s, PprofAddr: busy.Addr().String(), Log: log})
	if err == nil || !strings.Contains(err.Error(), "pprof listener") {
		t.Errorf("busy pprof address: %v", err)
	}
	if err := s.Serve(busy); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("public server left open after the pprof failure: %v", err)
	}
}
