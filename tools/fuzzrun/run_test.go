package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzModule writes a throwaway module with one fuzz target whose body is
// given, so run can be tried against go test itself.
func fuzzModule(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fz\n\ngo 1.26.0\n",
		"fz_test.go": `package fz

import "testing"

func FuzzTarget(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, s string) {
` + body + `
	})
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runIn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "")
	var out bytes.Buffer
	err := run(context.Background(), args, os.Getenv, &out)
	return out.String(), err
}

func TestRunCleanTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test -fuzz")
	}
	dir := fuzzModule(t, `		_ = len(s)`)
	out, err := runIn(t, dir, "-target", "FuzzTarget", "-pkg", ".", "-fuzztime", "500x")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "FuzzTarget: clean") {
		t.Errorf("output %q does not report a clean run", out)
	}
}

func TestRunFindingWritesReproducer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test -fuzz")
	}
	dir := fuzzModule(t, `		if len(s) > 2 {
			t.Fatalf("too long: %q", s)
		}`)
	out, err := runIn(t, dir, "-target", "FuzzTarget", "-pkg", ".", "-fuzztime", "100000x")
	if err == nil {
		t.Fatalf("run passed a failing target:\n%s", out)
	}
	if !strings.Contains(err.Error(), "failing input written") {
		t.Errorf("error %q does not name the written input", err)
	}
	if !strings.Contains(out, "reproducer: "+filepath.Join(dir, "testdata", "fuzz", "FuzzTarget")) {
		t.Errorf("output does not name the reproducer:\n%s", out)
	}
}
