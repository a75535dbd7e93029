package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Service is one service binary run as a child process on a loopback port.
// Everything it writes to stdout and stderr is appended to LogPath, across
// restarts, so the secret scan sees every line it ever logged.
type Service struct {
	Name    string
	Bin     string
	Addr    string // host:port it listens on
	LogPath string
	// Env is the service's whole environment besides PATH and HOME; the
	// runner's own environment is not inherited, so nothing leaks in.
	Env map[string]string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	exitErr  error
	exitedAt time.Time
}

// NewService prepares a service on a free loopback port.
func NewService(name, bin, logPath string, env map[string]string) (*Service, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return &Service{Name: name, Bin: bin, Addr: addr, LogPath: logPath, Env: env}, nil
}

// FreeAddr returns a loopback address nobody listens on right now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// URL is the absolute URL of path on the service.
func (s *Service) URL(path string) string { return "http://" + s.Addr + path }

func (s *Service) environ(extra map[string]string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}
	for k, v := range s.Env {
		if _, over := extra[k]; !over {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

func (s *Service) logWriter() (*os.File, error) {
	return os.OpenFile(s.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
}

// CLI runs a one-shot subcommand (migrate, demo, keys create, import) and
// returns its stdout; stderr goes to the log. A failure carries the last
// line of stderr, where the command says why it failed.
func (s *Service) CLI(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	logf, err := s.logWriter()
	if err != nil {
		return "", err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Env = s.environ(nil)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.MultiWriter(logf, &stderr)
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", s.Name, strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return out.String(), nil
}

// lastLine is the last line of s without surrounding space.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// CreateKey runs `keys create` and returns the plaintext key, the last line
// of stdout. That output is the operator's, not a service log, so it is not
// kept.
func (s *Service) CreateKey(ctx context.Context, args ...string) (string, error) {
	out, err := s.CLI(ctx, append([]string{"keys", "create"}, args...)...)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	if key == "" || strings.ContainsAny(key, " \t") {
		return "", fmt.Errorf("%s keys create: last line %q is not a key", s.Name, key)
	}
	return key, nil
}

// Start runs `serve` with extra environment on top of Env and waits until
// /healthz answers.
func (s *Service) Start(ctx context.Context, extra map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && !s.exitedLocked() {
		return fmt.Errorf("%s already running", s.Name)
	}
	logf, err := s.logWriter()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.Bin, "serve")
	cmd.Env = s.environ(extra)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The child dies with the runner, whatever kills the runner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	done := make(chan struct{})
	s.cmd, s.done, s.exitErr = cmd, done, nil
	go func() {
		err := cmd.Wait()
		logf.Close()
		s.mu.Lock()
		s.exitErr, s.exitedAt = err, time.Now()
		s.mu.Unlock()
		close(done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("%s exited during start: %v (see %s)", s.Name, s.exitErr, s.LogPath)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := client.Get(s.URL("/healthz")); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer /healthz within 30s", s.Name)
}

func (s *Service) exitedLocked() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Alive reports whether the process is still running.
func (s *Service) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil && !s.exitedLocked()
}

// Signal sends sig to the process.
func (s *Service) Signal(sig os.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("not started")
	}
	return s.cmd.Process.Signal(sig)
}

// Wait waits up to timeout for the process to exit and returns its exit
// error; exited is false on timeout.
func (s *Service) Wait(timeout time.Duration) (exited bool, at time.Time, exitErr error) {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return true, time.Now(), nil
	}
	select {
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return true, s.exitedAt, s.exitErr
	case <-time.After(timeout):
		return false, time.Time{}, nil
	}
}

// Stop sends SIGTERM, waits for the grace period and kills the process if
// it is still there.
func (s *Service) Stop(grace time.Duration) error {
	if !s.Alive() {
		return nil
	}
	_ = s.Signal(syscall.SIGTERM)
	if exited, _, err := s.Wait(grace); exited {
		return err
	}
	s.mu.Lock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	s.mu.Unlock()
	s.Wait(5 * time.Second)
	return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", s.Name, grace)
}
