package report

import (
	"strings"
	"testing"
)

// TestKeepForeign: a rewrite of RELIABILITY.md keeps the gateway section
// compose-smoke measured, and only that.
func TestKeepForeign(t *testing.T) {
	old := "# Reliability\n\n## Fault scenarios\nold figures\n\n## Gateway (make compose-smoke)\n\n| requests lost | 0 |\n"
	got := KeepForeign(old)
	if !strings.HasPrefix(got, "\n## Gateway (make compose-smoke)\n") || !strings.Contains(got, "requests lost") || strings.Contains(got, "old figures") {
		t.Fatalf("KeepForeign = %q", got)
	}
	if got := KeepForeign("# Reliability\n\n## Fault scenarios\n"); got != "" {
		t.Fatalf("KeepForeign without a gateway section = %q, want empty", got)
	}
}
