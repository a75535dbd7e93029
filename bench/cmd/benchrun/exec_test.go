package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordedCommandsAreRelative: a recorded command names no absolute path
// of the machine it ran on, in its directory or its arguments, and keeps a
// key's placeholder.
func TestRecordedCommandsAreRelative(t *testing.T) {
	root := t.TempDir()
	r := &runner{log: io.Discard}
	r.addReplacement(root+string(filepath.Separator), "")
	r.addSecret("s3cr3t", "$KEY")
	r.command(context.Background(), cmdSpec{
		name: filepath.Join(root, "bin", "notes-svc"),
		args: []string{"-out", filepath.Join(root, "bench", "out", "x.tsv"), "key=s3cr3t"},
		dir:  filepath.Join(root, "bench", "lua"),
	})
	got := strings.Join(r.commands, "\n")
	if want := "(cd bench/lua && bin/notes-svc -out bench/out/x.tsv key=$KEY)"; got != want {
		t.Fatalf("recorded %q; want %q", got, want)
	}
}
