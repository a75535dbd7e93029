package eodhd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpoolIsReadWhileWritten: a reader gets the answer's bytes as they
// arrive, a second reader from the start gets them all again, the file is
// gone after Close, and a body that fails mid-way fails its readers.
func TestSpoolIsReadWhileWritten(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, "spool-*")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	sp := newSpool(f, pr)
	r := sp.reader()
	buf := make([]byte, 64)
	for _, part := range []string{`[{"code":"A"}`, `,{"code":"B"}]`} {
		if _, err := pw.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
		n, err := io.ReadFull(r, buf[:len(part)])
		if err != nil || string(buf[:n]) != part {
			t.Fatalf("read %q, %v; want %q before the body ends", buf[:n], err, part)
		}
	}
	pw.Close()
	if n, err := r.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the end: %d bytes, %v", n, err)
	}
	all, err := io.ReadAll(sp.reader())
	if err != nil || string(all) != `[{"code":"A"},{"code":"B"}]` {
		t.Fatalf("second reader: %q, %v", all, err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("files left after Close: %v", left)
	}

	f, err = os.CreateTemp(dir, "spool-*")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw = io.Pipe()
	sp = newSpool(f, pr)
	defer sp.Close()
	broken := errors.New("connection reset")
	go func() {
		pw.Write([]byte(`[{"code":"A"},`))
		pw.CloseWithError(broken)
	}()
	_, err = io.ReadAll(sp.reader())
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "read bulk answer") {
		t.Fatalf("a body cut off: %v, want the read error", err)
	}
}
