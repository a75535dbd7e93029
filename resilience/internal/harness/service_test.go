package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIReportsWhyACommandFailed runs a stand-in binary: stdout is
// returned, stderr goes to the log, and a failure names the command and
// carries stderr's last line.
func TestCLIReportsWhyACommandFailed(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "svc")
	script := "#!/bin/sh\necho \"out $DB_URL\"\necho 'starting' >&2\nif [ \"$1\" = fail ]; then echo 'svc: no such table' >&2; exit 1; fi\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Service{Name: "svc", Bin: bin, LogPath: filepath.Join(dir, "log"), Env: map[string]string{"DB_URL": "db1"}}

	out, err := s.CLI(context.Background(), "ok")
	if err != nil || out != "out db1\n" {
		t.Fatalf("CLI(ok) = %q, %v; want the stdout and no error", out, err)
	}
	_, err = s.CLI(context.Background(), "fail", "now")
	if err == nil || !strings.HasPrefix(err.Error(), "svc fail now: exit status 1") || !strings.HasSuffix(err.Error(), ": svc: no such table") {
		t.Fatalf("CLI(fail) error = %v; want the command and stderr's last line", err)
	}
	log, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(log), "starting\n"); got != 2 || !strings.Contains(string(log), "svc: no such table") || strings.Contains(string(log), "out db1") {
		t.Errorf("log = %q; want both runs' stderr and no stdout", log)
	}
}
