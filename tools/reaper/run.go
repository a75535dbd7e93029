package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// config is read from Ryuk's own environment variables, which
// testcontainers-go sets on the container.
type config struct {
	addr                string
	connectionTimeout   time.Duration
	reconnectionTimeout time.Duration
	socket              string
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{addr: ":8080", connectionTimeout: time.Minute, reconnectionTimeout: 10 * time.Second, socket: "/var/run/docker.sock"}
	if p := getenv("RYUK_PORT"); p != "" {
		c.addr = ":" + p
	}
	for name, dst := range map[string]*time.Duration{"RYUK_CONNECTION_TIMEOUT": &c.connectionTimeout, "RYUK_RECONNECTION_TIMEOUT": &c.reconnectionTimeout} {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive duration", name, v)
			}
			*dst = d
		}
	}
	return c, nil
}

// pruner removes what matches a set of label filters.
type pruner interface {
	prune(ctx context.Context, filters []map[string]map[string]bool) error
}

// run serves clients until they are gone, then prunes and returns.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("no arguments expected, got %q", args)
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stdout, nil))
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return serve(ctx, ln, cfg, newDocker(cfg.socket), log)
}

// serve accepts clients on ln and, once the timeouts say the session is
// over, prunes every filter it was sent.
func serve(ctx context.Context, ln net.Listener, cfg config, p pruner, log *slog.Logger) error {
	log.Info("reaper listening", "addr", ln.Addr().String())
	var mu sync.Mutex
	filters := map[string]map[string]map[string]bool{}
	events := make(chan int) // +1 a client came, -1 a client left
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case events <- 1:
			case <-ctx.Done():
				_ = conn.Close()
				return
			}
			go func() {
				defer func() {
					select {
					case events <- -1:
					case <-ctx.Done():
					}
				}()
				handle(conn, func(line string) error {
					f, err := parseFilter(line)
					if err != nil {
						return err
					}
					mu.Lock()
					filters[line] = f
					mu.Unlock()
					log.Info("filter added", "filter", line)
					return nil
				}, log)
			}()
		}
	}()
	clients := 0
	timer := time.NewTimer(cfg.connectionTimeout)
	defer timer.Stop()
wait:
	for {
		select {
		case d := <-events:
			clients += d
			if clients == 0 {
				timer.Reset(cfg.reconnectionTimeout)
			} else {
				timer.Stop()
			}
		case <-timer.C:
			if clients == 0 {
				break wait
			}
		case <-ctx.Done():
			log.Info("signal received; pruning now")
			break wait
		}
	}
	_ = ln.Close()
	mu.Lock()
	all := make([]map[string]map[string]bool, 0, len(filters))
	for _, f := range filters {
		all = append(all, f)
	}
	mu.Unlock()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := p.prune(pctx, all); err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	log.Info("pruned", "filters", len(all))
	return nil
}

// handle reads filter lines from one client and acknowledges each one it
// accepted, until the client closes the connection.
func handle(conn net.Conn, add func(string) error, log *slog.Logger) {
	defer conn.Close()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := add(line); err != nil {
			log.Warn("filter refused", "filter", line, "err", err)
			if _, err := io.WriteString(conn, "ERROR\n"); err != nil {
				return
			}
			continue
		}
		if _, err := io.WriteString(conn, "ACK\n"); err != nil {
			return
		}
	}
}

// parseFilter turns "label=k=v&label=k2=v2" into Docker's filters
// argument, {"label": {"k=v": true, "k2=v2": true}}: all must match.
func parseFilter(line string) (map[string]map[string]bool, error) {
	q, err := url.ParseQuery(line)
	if err != nil {
		return nil, fmt.Errorf("parse filter: %w", err)
	}
	f := map[string]map[string]bool{}
	for k, vs := range q {
		for _, v := range vs {
			if f[k] == nil {
				f[k] = map[string]bool{}
			}
			f[k][v] = true
		}
	}
	if len(f["label"]) == 0 {
		// A filter without a label would match everything on the engine.
		return nil, errors.New("parse filter: no label")
	}
	return f, nil
}
