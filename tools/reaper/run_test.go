package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"reflect"
	"testing"
	"time"
)

type recordingPruner struct {
	got chan []map[string]map[string]bool
}

func (r recordingPruner) prune(_ context.Context, f []map[string]map[string]bool) error {
	r.got <- f
	return nil
}

func TestParseFilter(t *testing.T) {
	got, err := parseFilter("label=org.testcontainers=true&label=org.testcontainers.sessionId=abc")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]bool{"label": {"org.testcontainers=true": true, "org.testcontainers.sessionId=abc": true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseFilter = %v, want %v", got, want)
	}
	for _, bad := range []string{"name=x", "label=%zz", "foo"} {
		if _, err := parseFilter(bad); err == nil {
			t.Errorf("parseFilter(%q) accepted a filter without a label", bad)
		}
	}
}

// TestPrunesOnlyAfterTheLastClientStaysAway follows a session: a filter
// acknowledged, the client leaving and a second one coming back within
// the reconnection timeout (no prune), then both gone (prune, once, with
// the filter).
func TestPrunesOnlyAfterTheLastClientStaysAway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := recordingPruner{got: make(chan []map[string]map[string]bool, 1)}
	cfg := config{connectionTimeout: time.Minute, reconnectionTimeout: 300 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- serve(t.Context(), ln, cfg, p, slog.New(slog.NewTextHandler(io.Discard, nil))) }()

	c1 := dial(t, ln.Addr().String())
	send(t, c1, "label=org.testcontainers.sessionId=s1")
	c2 := dial(t, ln.Addr().String())
	send(t, c2, "label=org.testcontainers.sessionId=s1") // acknowledged: c2 counts as connected
	_ = c1.Close()
	select {
	case f := <-p.got:
		t.Fatalf("pruned %v while a client was still connected", f)
	case <-time.After(2 * cfg.reconnectionTimeout):
	}
	_ = c2.Close()
	select {
	case f := <-p.got:
		want := []map[string]map[string]bool{{"label": {"org.testcontainers.sessionId=s1": true}}}
		if !reflect.DeepEqual(f, want) {
			t.Errorf("pruned %v, want %v", f, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no prune after the last client left")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, filter string) {
	t.Helper()
	if _, err := io.WriteString(c, filter+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "ACK\n" {
		t.Fatalf("answer to %q: %q, %v; want ACK", filter, line, err)
	}
}
