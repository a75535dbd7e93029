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

// TestKeepForeignReplicas: the read-replica section is kept too, alone or
// after the gateway's.
func TestKeepForeignReplicas(t *testing.T) {
	old := "# Reliability\n\n## Fault scenarios\nold figures\n\n## PostgreSQL read replicas\n\nlag bound 1 s\n"
	if got := KeepForeign(old); !strings.HasPrefix(got, "\n## PostgreSQL read replicas\n") || strings.Contains(got, "old figures") {
		t.Fatalf("KeepForeign = %q", got)
	}
	both := "# Reliability\n\n## Fault scenarios\nold\n\n## Gateway (make compose-smoke)\n\ngw\n\n## PostgreSQL read replicas\n\nlag\n"
	if got := KeepForeign(both); !strings.Contains(got, "gw") || !strings.Contains(got, "lag") || strings.Contains(got, "old") {
		t.Fatalf("KeepForeign = %q", got)
	}
}

// TestKeepForeignRedisCluster: the Redis Cluster figures (marketdata-svc's
// failover test) survive a rewrite, alone or after the gateway's.
func TestKeepForeignRedisCluster(t *testing.T) {
	cluster := "\n## Redis Cluster\n\n| failover | 4.4 s |\n"
	if got := KeepForeign("# Reliability\n\n## Fault scenarios\nold\n" + cluster); got != cluster {
		t.Fatalf("KeepForeign = %q, want the Redis Cluster section", got)
	}
	gateway := "\n## Gateway (make compose-smoke)\n\n| requests lost | 0 |\n"
	if got := KeepForeign("# Reliability\n\n## Fault scenarios\nold\n" + gateway + cluster); got != gateway+cluster {
		t.Fatalf("KeepForeign = %q, want both sections", got)
	}
}
