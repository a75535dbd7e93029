package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// runner starts every external command of the benchmark and records it, so
// the report can list the exact commands. Secrets of the throwaway bench
// keys are replaced by placeholders in the record, and the repository's
// absolute path by nothing.
type runner struct {
	log      io.Writer
	commands []string
	redact   map[string]string // text -> its replacement
}

func (r *runner) addSecret(value, placeholder string) { r.addReplacement(value, placeholder) }

func (r *runner) addReplacement(text, replacement string) {
	if r.redact == nil {
		r.redact = map[string]string{}
	}
	r.redact[text] = replacement
}

// cmdSpec describes one command: extra environment (recorded) on top of the
// harness's own environment.
type cmdSpec struct {
	name string
	args []string
	env  map[string]string
	dir  string
	// quiet keeps the command out of the recorded list (helpers such as
	// psql queries that only read state).
	quiet bool
}

func (r *runner) command(ctx context.Context, s cmdSpec) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.name, s.args...)
	cmd.Dir = s.dir
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(s.env))
	for k := range s.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var line []string
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+s.env[k])
		line = append(line, k+"="+shellQuote(s.env[k]))
	}
	line = append(line, shellQuote(s.name))
	for _, a := range s.args {
		line = append(line, shellQuote(a))
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if !s.quiet {
		rec := strings.Join(line, " ")
		if s.dir != "" {
			rec = "(cd " + shellQuote(s.dir) + " && " + rec + ")"
		}
		rec = r.redactText(rec)
		r.commands = append(r.commands, rec)
		fmt.Fprintf(r.log, "bench: $ %s\n", rec)
	}
	return cmd
}

func (r *runner) redactText(s string) string {
	for secret, ph := range r.redact {
		s = strings.ReplaceAll(s, secret, ph)
	}
	return s
}

// output runs the command and returns its stdout; stderr goes into the error.
func (r *runner) output(ctx context.Context, s cmdSpec) (string, error) {
	cmd := r.command(ctx, s)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", s.name, strings.Join(firstN(s.args, 3), " "), err,
			r.redactText(lastLines(stderr.String()+stdout.String(), 8)))
	}
	return stdout.String(), nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if s != "" && safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
