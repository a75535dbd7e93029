package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query notes: %w", &pgconn.PgError{Code: code}) }
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Other},
		{"statement timeout", pg("57014"), Timeout},
		{"lock not available", pg("55P03"), Timeout},
		{"admin shutdown", pg("57P01"), Unavailable},
		{"crash shutdown", pg("57P02"), Unavailable},
		{"cannot connect now", pg("57P03"), Unavailable},
		{"too many connections", pg("53300"), Unavailable},
		{"connection exception", pg("08006"), Unavailable},
		{"serialization failure", pg("40001"), Conflict},
		{"deadlock", pg("40P01"), Conflict},
		{"read-only transaction (a demoted primary)", pg("25006"), Unavailable},
		{"a standby found by CheckPrimary", fmt.Errorf("ping: %w", ErrReadOnly), Unavailable},
		{"unique violation", pg("23505"), Other},
		{"no rows (database/sql)", fmt.Errorf("get: %w", sql.ErrNoRows), NoRows},
		{"no rows (pgx)", fmt.Errorf("get: %w", pgx.ErrNoRows), NoRows},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), Timeout},
		{"canceled", fmt.Errorf("get: %w", context.Canceled), Canceled},
		{"bad conn", driver.ErrBadConn, Unavailable},
		{"conn done", sql.ErrConnDone, Unavailable},
		{"eof", io.ErrUnexpectedEOF, Unavailable},
		{"plain", errors.New("something else"), Other},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s: Classify = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestParseConfigSessionSettings(t *testing.T) {
	cfg, err := ParseConfig("postgres://u:secret@db.invalid/app", PoolOptions{ApplicationName: "svc", StatementTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"application_name": "svc", "statement_timeout": "2000", "idle_in_transaction_session_timeout": "4000", "jit": "off",
	} {
		if got := cfg.RuntimeParams[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if cfg.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("connect timeout = %v, want %v", cfg.ConnectTimeout, DefaultConnectTimeout)
	}
	// The URL's own settings win over defaults but not over explicit options.
	cfg, err = ParseConfig("postgres://db.invalid/app?connect_timeout=9&application_name=mine&jit=on", PoolOptions{ApplicationName: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 9*time.Second || cfg.RuntimeParams["application_name"] != "mine" || cfg.RuntimeParams["jit"] != "on" {
		t.Errorf("URL settings lost: %v %q jit %q", cfg.ConnectTimeout, cfg.RuntimeParams["application_name"], cfg.RuntimeParams["jit"])
	}
	if _, ok := cfg.RuntimeParams["statement_timeout"]; ok {
		t.Error("statement_timeout set without a StatementTimeout")
	}
}

func TestParseConfigHidesTheURL(t *testing.T) {
	_, err := ParseConfig("postgres://u:hunter2@db.invalid:notaport/app", PoolOptions{})
	if !errors.Is(err, ErrInvalidURL) {
		t.Fatalf("err = %v, want ErrInvalidURL", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error quotes the password: %v", err)
	}
}

func TestRetryOnce(t *testing.T) {
	readOnly := fmt.Errorf("update note: %w", &pgconn.PgError{Code: "25006"})
	cases := []struct {
		name      string
		errs      []error // what each call returns, in order
		wantCalls int
		wantErr   error
	}{
		{"success", []error{nil}, 1, nil},
		{"demoted node, then the new primary", []error{readOnly, nil}, 2, nil},
		{"cut connection, then the new primary", []error{io.ErrUnexpectedEOF, nil}, 2, nil},
		{"twice unavailable: one retry only", []error{readOnly, readOnly, nil}, 2, readOnly},
		{"timeout: not retried", []error{context.DeadlineExceeded, nil}, 1, context.DeadlineExceeded},
		{"constraint: not retried", []error{&pgconn.PgError{Code: "23505"}, nil}, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			_, err := RetryOnce(context.Background(), func(context.Context) (int, error) {
				calls++
				return calls, c.errs[calls-1]
			})
			if calls != c.wantCalls {
				t.Errorf("calls = %d, want %d", calls, c.wantCalls)
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
			if c.wantErr == nil && c.errs[c.wantCalls-1] == nil && err != nil {
				t.Errorf("err = %v, want nil", err)
			}
		})
	}
}

func TestRetryOnceKeepsTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), RetryPause)
	defer cancel()
	calls := 0
	_, err := RetryOnce(ctx, func(context.Context) (int, error) { calls++; return 0, driver.ErrBadConn })
	if calls != 1 || !errors.Is(err, driver.ErrBadConn) {
		t.Errorf("calls = %d, err = %v; want one call when the deadline leaves no room for a second", calls, err)
	}
}

// message frames a backend message.
func message(typ byte, body []byte) []byte {
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(body)+4))
	return append(out, body...)
}

func notice(msg string) []byte {
	return message('N', []byte("SWARNING\x00VWARNING\x00C01000\x00M"+msg+"\x00\x00"))
}

func TestSyncRepGuard(t *testing.T) {
	commandComplete := message('C', []byte("COMMIT\x00"))
	ready := message('Z', []byte("I"))
	row := message('D', []byte("\x00\x01\x00\x00\x00\x3bcanceling wait for synchronous replication due to user request"))
	cases := []struct {
		name   string
		stream []byte
		fail   bool
	}{
		{"a plain commit", slices.Concat(commandComplete, ready), false},
		{"a row holding the warning's words", slices.Concat(row, commandComplete, ready), false},
		{"another warning", slices.Concat(notice("there is no transaction in progress"), commandComplete, ready), false},
		{"a commit whose standby wait was cancelled", slices.Concat(notice("canceling wait for synchronous replication due to user request"), commandComplete, ready), true},
		{"the same wait cut by a shutdown", slices.Concat(notice("canceling the wait for synchronous replication and terminating connection due to administrator command"), commandComplete), true},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 3, 7, 4096} { // any split of the stream into reads
			g := &syncRepGuard{r: iotest.OneByteReader(bytes.NewReader(c.stream))}
			if chunk > 1 {
				g.r = &chunked{b: c.stream, n: chunk}
			}
			_, err := io.ReadAll(g)
			if got := errors.Is(err, ErrCommitNotReplicated); got != c.fail {
				t.Errorf("%s (reads of %d): failed = %v (%v), want %v", c.name, chunk, got, err, c.fail)
			}
		}
	}
	if Classify(fmt.Errorf("commit: %w", ErrCommitNotReplicated)) != Unavailable {
		t.Error("ErrCommitNotReplicated is not Unavailable")
	}
}

// chunked reads b n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}
