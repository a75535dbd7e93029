package cmdmain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// childEnv makes the test binary, started again by a test, act as a
// command whose main is Run.
const childEnv = "CMDMAIN_TEST_CHILD"

// TestMain is the child's main when childEnv is set: its value picks what
// run does.
func TestMain(m *testing.M) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		os.Exit(m.Run())
	}
	Run("child", func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
		switch mode {
		case "ok":
			fmt.Fprintf(stdout, "args=%s env=%s\n", strings.Join(args, ","), getenv(childEnv))
			return nil
		case "fail":
			return errors.New("it broke")
		case "partial":
			return &ExitError{Code: 3, Err: fmt.Errorf("sync: %w", errors.New("2 symbols failed"))}
		case "wait":
			fmt.Fprintln(stdout, "ready")
			<-ctx.Done()
			return fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
		return fmt.Errorf("unknown mode %q", mode)
	})
	os.Exit(0)
}

// child starts the test binary as a command in mode, with args after the
// test flags.
func child(t *testing.T, mode string, args ...string) (*exec.Cmd, *logbuf.Buffer, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	// stdout is read while the child runs.
	var stdout logbuf.Buffer
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func TestRunPassesArgsEnvAndStdout(t *testing.T) {
	cmd, stdout, stderr := child(t, "ok", "a", "b")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v (stderr %q)", err, stderr)
	}
	if got, want := stdout.String(), "args=a,b env=ok\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q, want nothing", stderr)
	}
}

// TestRunExitStatus: an error is one "name: err" line and status 1; an
// ExitError, wrapped or not, sets the status, so a scheduler tells a
// partial run (3) from a failed one (1).
func TestRunExitStatus(t *testing.T) {
	for _, c := range []struct {
		mode, stderr string
		status       int
	}{
		{"fail", "child: it broke\n", 1},
		{"partial", "child: sync: 2 symbols failed\n", 3},
	} {
		cmd, _, stderr := child(t, c.mode)
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.status {
			t.Fatalf("%s: run: %v, want exit status %d", c.mode, err, c.status)
		}
		if got := stderr.String(); got != c.stderr {
			t.Errorf("%s: stderr = %q, want %q", c.mode, got, c.stderr)
		}
	}
}

func TestRunCancelsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stdout, stderr := child(t, "wait")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The handler is installed before run starts, so a signal
			// sent once "ready" is out reaches the context.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(stdout.String(), "ready") {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("child never got ready")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("wait: %v, want exit status 1 from run's error", err)
			}
			if got, want := stderr.String(), "child: stopped: "+sig.String()+" signal received\n"; got != want {
				t.Errorf("stderr = %q, want %q", got, want)
			}
		})
	}
}

func TestCommandAnswersVersionAndHelpInEverySpelling(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		var out bytes.Buffer
		if _, _, done := Command([]string{arg}, "serve", "svc", "v1.2.3", "usage text", &out); !done || out.String() != "svc v1.2.3\n" {
			t.Errorf("%s: done %v, printed %q", arg, done, out.String())
		}
	}
	for _, arg := range []string{"help", "--help", "-help", "-h"} {
		var out bytes.Buffer
		if _, _, done := Command([]string{arg}, "serve", "svc", "v1.2.3", "usage text", &out); !done || out.String() != "usage text\n" {
			t.Errorf("%s: done %v, printed %q", arg, done, out.String())
		}
	}
}

func TestCommandSplitsTheRestAndDefaults(t *testing.T) {
	var out bytes.Buffer
	cmd, rest, done := Command(nil, "serve", "svc", "v", "u", &out)
	if cmd != "serve" || len(rest) != 0 || done {
		t.Errorf("no args: %q %q %v", cmd, rest, done)
	}
	cmd, rest, done = Command([]string{"keys", "create", "--account", "a"}, "serve", "svc", "v", "u", &out)
	if cmd != "keys" || strings.Join(rest, " ") != "create --account a" || done {
		t.Errorf("keys: %q %q %v", cmd, rest, done)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q for commands it does not answer", out.String())
	}
}
