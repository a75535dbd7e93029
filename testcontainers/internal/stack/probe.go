package stack

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go/wait"
)

// probe is a wait strategy that asks the server itself, through its
// published port, and passes once the answer shows it serves clients. A
// port published by Docker accepts connections before anything listens
// inside the container, so a bare connect proves nothing; and a probe
// from the test's side costs no `docker exec` per poll, which on a busy
// machine slowed the very start it was waiting for.
type probe struct {
	what  string
	port  nat.Port
	hello []byte
	ok    func(answer []byte) bool
}

// WaitUntilReady polls every 100 ms until the answer is right, the
// container stops, or startTimeout passes.
func (p *probe) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := p.try(ctx, target)
		if err == nil {
			return nil
		}
		if st, serr := target.State(ctx); serr == nil && !st.Running {
			return fmt.Errorf("%s: container stopped (exit code %d) before it was ready", p.what, st.ExitCode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last answer: %v)", p.what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func (p *probe) try(ctx context.Context, target wait.StrategyTarget) error {
	host, err := target.Host(ctx)
	if err != nil {
		return err
	}
	mapped, err := target.MappedPort(ctx, p.port)
	if err != nil {
		return err
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", net.JoinHostPort(host, mapped.Port()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(p.hello); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(conn, buf, 1)
	if err != nil {
		return err
	}
	if !p.ok(buf[:n]) {
		return fmt.Errorf("answer %q", buf[:n])
	}
	return nil
}

// postgresReady sends a protocol 3.0 startup message for user and db:
// a server that takes connections asks for authentication ('R'); one
// still starting up, or the entrypoint's socket-only init server behind
// Docker's proxy, answers an error or nothing.
func postgresReady(user, db string) *probe {
	var body bytes.Buffer
	_ = binary.Write(&body, binary.BigEndian, int32(196608)) // protocol 3.0
	for _, s := range []string{"user", user, "database", db, ""} {
		body.WriteString(s)
		body.WriteByte(0)
	}
	msg := binary.BigEndian.AppendUint32(nil, uint32(body.Len()+4))
	msg = append(msg, body.Bytes()...)
	return &probe{what: "postgres", port: "5432/tcp", hello: msg, ok: func(b []byte) bool { return b[0] == 'R' }}
}

// redisReady sends PING and wants +PONG; a Redis still loading answers
// -LOADING.
func redisReady() *probe {
	return &probe{what: "redis", port: "6379/tcp", hello: []byte("PING\r\n"),
		ok: func(b []byte) bool { return bytes.HasPrefix(b, []byte("+PONG")) }}
}

// String names the probe in testcontainers' log lines.
func (p *probe) String() string { return p.what + " answering on " + string(p.port) }

var _ wait.Strategy = (*probe)(nil)
