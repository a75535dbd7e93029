package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/healthcheck"
	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// TestServe runs serve through run, with Redis and without: it becomes
// ready, reports its cache, and stops cleanly when its context ends.
func TestServe(t *testing.T) {
	dbURL := testenv.Postgres(t)
	for name, want := range map[string]string{"redis": "ok", "local": "in-process"} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			env := map[string]string{"MARKETDATA_DATABASE_URL": dbURL, "MARKETDATA_HTTP_ADDR": addr, "MARKETDATA_SHUTDOWN_DRAIN": "0s"}
			if name == "redis" {
				env["MARKETDATA_REDIS_URL"] = testenv.Redis(t)
			}
			if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, io.Discard); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out logbuf.Buffer
			done := make(chan error, 1)
			go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &out) }()

			deadline := time.Now().Add(10 * time.Second)
			for healthcheck.Check(ctx, addr, io.Discard) != nil {
				if time.Now().After(deadline) {
					t.Fatalf("not ready after 10s:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			res, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			var ready map[string]string
			err = json.NewDecoder(res.Body).Decode(&ready)
			res.Body.Close()
			if err != nil || ready["cache"] != want || ready["database"] != "ok" {
				t.Errorf("readyz %v, %v; want cache %q", ready, err, want)
			}

			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not stop")
			}
			if !strings.Contains(out.String(), `"msg":"stopped"`) {
				t.Errorf("no stopped line:\n%s", out.String())
			}
		})
	}
}
