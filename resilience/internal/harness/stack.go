// Package harness runs the pieces the fault suite breaks on purpose: its
// own PostgreSQL and Redis servers (stopped and started at will) and the
// service binaries as child processes whose logs it captures.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stack is the suite's private PostgreSQL and Redis, laid out by
// scripts/stack.sh under Dir. It is never the shared default stack.
type Stack struct {
	Dir       string
	PGPort    int
	RedisPort int
	pgBin     string
}

// NewStack finds the PostgreSQL binaries and checks both servers answer.
func NewStack(ctx context.Context, dir string, pgPort, redisPort int) (*Stack, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Stack{Dir: dir, PGPort: pgPort, RedisPort: redisPort}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Slice(bins, func(i, j int) bool { return pgMajor(bins[i]) > pgMajor(bins[j]) })
	if len(bins) > 0 {
		s.pgBin = filepath.Dir(bins[0])
	} else if p, err := exec.LookPath("pg_ctl"); err == nil {
		s.pgBin = filepath.Dir(p)
	} else {
		return nil, errors.New("pg_ctl not found")
	}
	if _, err := s.PSQL(ctx, "postgres", "select 1"); err != nil {
		return nil, fmt.Errorf("stack postgres on port %d: %w", pgPort, err)
	}
	if !s.RedisUp(ctx) {
		return nil, fmt.Errorf("stack redis on port %d does not answer", redisPort)
	}
	return s, nil
}

func pgMajor(path string) int {
	v := strings.TrimPrefix(path, "/usr/lib/postgresql/")
	n, _ := strconv.Atoi(strings.SplitN(v, "/", 2)[0])
	return n
}

// DatabaseURL is the URL of database db on the stack.
func (s *Stack) DatabaseURL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.PGPort, db)
}

// RedisURL is the URL of the stack's Redis, database n.
func (s *Stack) RedisURL(n int) string {
	return fmt.Sprintf("redis://127.0.0.1:%d/%d", s.RedisPort, n)
}

// PSQL runs sql in db and returns the unaligned, tuples-only output.
func (s *Stack) PSQL(ctx context.Context, db, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", "-h", "127.0.0.1", "-p", strconv.Itoa(s.PGPort), "-U", "postgres",
		"-d", db, "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("psql %q: %w: %s", sql, err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// HoldPSQL starts sql in db in the background (a held lock, a pg_sleep)
// and returns the running command; cancel ctx or wait for it to end.
func (s *Stack) HoldPSQL(ctx context.Context, db, sql string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, "psql", "-h", "127.0.0.1", "-p", strconv.Itoa(s.PGPort), "-U", "postgres",
		"-d", db, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start psql: %w", err)
	}
	return cmd, nil
}

// WaitLock returns once a lock of mode (as pg_locks spells it, such as
// "AccessExclusiveLock") on table in db is granted, so that a scenario's
// timeline starts from a lock that is really held, not from when psql was
// started. It gives up after 5 s.
func (s *Stack) WaitLock(ctx context.Context, db, table, mode string) error {
	query := fmt.Sprintf("SELECT count(*) FROM pg_locks WHERE relation = '%s'::regclass AND mode = '%s' AND granted", table, mode)
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := s.PSQL(ctx, db, query)
		if err == nil && out != "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s not granted within 5 s (last error: %v)", mode, table, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RecreateDatabase drops db if it exists and creates it empty, so every run
// starts from the same state.
func (s *Stack) RecreateDatabase(ctx context.Context, db string) error {
	if _, err := s.PSQL(ctx, "postgres", fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", db)); err != nil {
		return err
	}
	_, err := s.PSQL(ctx, "postgres", "CREATE DATABASE "+db)
	return err
}

// asPostgres runs a PostgreSQL server command as the cluster owner:
// PostgreSQL refuses to run as root.
func (s *Stack) asPostgres(ctx context.Context, name string, args ...string) error {
	bin := filepath.Join(s.pgBin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// StopPostgres stops PostgreSQL in fast mode: open sessions are cut, as in
// a crash of the database host or a failover.
func (s *Stack) StopPostgres(ctx context.Context) error {
	return s.asPostgres(ctx, "pg_ctl", "-D", filepath.Join(s.Dir, "pg"), "-m", "fast", "-w", "-t", "60", "stop")
}

// StartPostgres starts PostgreSQL and returns once it accepts connections.
func (s *Stack) StartPostgres(ctx context.Context) error {
	dir := filepath.Join(s.Dir, "pg")
	return s.asPostgres(ctx, "pg_ctl", "-D", dir, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start")
}

// RedisUp reports whether Redis answers PING.
func (s *Stack) RedisUp(ctx context.Context) bool {
	out, err := exec.CommandContext(ctx, "redis-cli", "-p", strconv.Itoa(s.RedisPort), "ping").Output()
	return err == nil && strings.TrimSpace(string(out)) == "PONG"
}

// RedisCLI runs one redis-cli command and returns its output.
func (s *Stack) RedisCLI(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-p", strconv.Itoa(s.RedisPort)}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// StopRedis shuts Redis down without saving: its data is gone, as after a
// crash of a cache node.
func (s *Stack) StopRedis(ctx context.Context) error {
	_, _ = s.RedisCLI(ctx, "shutdown", "nosave")
	for range 50 {
		if !s.RedisUp(ctx) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("redis still answers after shutdown")
}

// StartRedis starts Redis with the options scripts/stack.sh uses and waits
// until it answers.
func (s *Stack) StartRedis(ctx context.Context) error {
	dir := filepath.Join(s.Dir, "redis")
	cmd := exec.CommandContext(ctx, "redis-server", "--port", strconv.Itoa(s.RedisPort), "--bind", "127.0.0.1",
		"--daemonize", "yes", "--dir", dir, "--save", "", "--appendonly", "no",
		"--pidfile", filepath.Join(dir, "redis.pid"), "--logfile", filepath.Join(dir, "redis.log"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("redis-server: %w: %s", err, out)
	}
	for range 100 {
		if s.RedisUp(ctx) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("redis did not answer after start")
}
