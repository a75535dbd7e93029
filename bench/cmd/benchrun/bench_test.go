package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRevisionOf: a run's reports left uncommitted by an earlier run do
// not make the revision dirty; a change to any other tracked file does.
func TestRevisionOf(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", args...).CombinedOutput()
		return string(out), err
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := git(append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	for _, f := range []string{"BENCHMARKS.md", "bench/results.json", "bench/scale-plans.md", "bench/analysis.md", "main.go"} {
		write(f, "a")
	}
	run("add", ".")
	run("commit", "-q", "-m", "c")
	clean := revisionOf(root, git)
	if clean == "" || strings.HasSuffix(clean, "-dirty") {
		t.Fatalf("a clean checkout: revision %q", clean)
	}
	for _, f := range []string{"BENCHMARKS.md", "bench/results.json", "bench/scale-plans.md"} {
		write(f, "b")
	}
	if got := revisionOf(root, git); got != clean {
		t.Errorf("with only the reports changed: revision %q, want %q", got, clean)
	}
	for _, f := range []string{"bench/analysis.md", "main.go"} {
		write(f, "b")
		if got := revisionOf(root, git); got != clean+"-dirty" {
			t.Errorf("with %s changed: revision %q, want %q", f, got, clean+"-dirty")
		}
		write(f, "a")
	}
}
