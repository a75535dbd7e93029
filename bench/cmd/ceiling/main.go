// Command ceiling is the throughput ceiling of an HTTP workload whose answer
// is already in memory: a bare Gin engine, no middleware at all, answering
// each route with bytes captured from the real service. Whatever a service
// does on a cache hit beyond this (auth, rate limiting, the cache round trip,
// logging, metrics) shows up as the distance to this ceiling.
//
//	ceiling -addr 127.0.0.1:18090 -route /v1/eod=eod.json -route /v1/tickers=tickers.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
	"github.com/tickerdesk/tickerdesk/pkg/httpserve"
)

func main() {
	cmdmain.Run("ceiling", run)
}

// routeFlags collects repeated -route PATH=FILE flags.
type routeFlags map[string]string

func (r routeFlags) String() string { return fmt.Sprint(map[string]string(r)) }

func (r routeFlags) Set(v string) error {
	path, file, ok := strings.Cut(v, "=")
	if !ok || !strings.HasPrefix(path, "/") || file == "" {
		return fmt.Errorf("want PATH=FILE, got %q", v)
	}
	r[path] = file
	return nil
}

func run(ctx context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ceiling", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18090", "listen address")
	contentType := fs.String("content-type", "application/json; charset=utf-8", "Content-Type of every answer")
	routes := routeFlags{}
	fs.Var(routes, "route", "PATH=FILE: answer GET PATH with the bytes of FILE (repeatable)")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this address (empty: off), to profile the ceiling beside the service")
	headers := routeFlags{}
	fs.Var(headers, "headers", "PATH=FILE: answer GET PATH with the header lines (Key: value) of FILE too (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(routes) == 0 {
		return errors.New("no -route given")
	}
	engine, err := newEngine(routes, headers, *contentType)
	if err != nil {
		return err
	}
	return httpserve.Run(ctx, httpserve.Options{
		Addr:            *addr,
		Server:          &http.Server{Handler: engine, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second},
		ShutdownTimeout: 5 * time.Second,
		PprofAddr:       *pprofAddr,
		Log:             slog.New(slog.NewTextHandler(stdout, nil)).With("cmd", "ceiling", "routes", len(routes)),
	})
}

// newEngine is the bare engine: gin.New without any middleware, one handler
// per route writing the captured headers and bytes. The headers are parsed
// once; each answer assigns their values as the service does.
func newEngine(routes, headerFiles map[string]string, contentType string) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	for path, file := range routes {
		body, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var fields http.Header
		if hf, ok := headerFiles[path]; ok {
			if fields, err = readHeaders(hf); err != nil {
				return nil, err
			}
		}
		engine.GET(path, func(c *gin.Context) {
			h := c.Writer.Header()
			for k, v := range fields {
				h[k] = v
			}
			c.Data(http.StatusOK, contentType, body)
		})
	}
	return engine, nil
}

// readHeaders reads "Key: value" lines, keys in canonical form.
func readHeaders(file string) (http.Header, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			return nil, fmt.Errorf("%s: want Key: value, got %q", file, line)
		}
		h.Add(k, v)
	}
	return h, nil
}
