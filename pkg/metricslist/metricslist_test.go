package metricslist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMissing: a listed name counts as exported only with a sample line of
// its own in some scrape, not as a prefix of another metric's name or in a
// HELP comment.
func TestMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.txt")
	list := "# generated\nhttp_requests_total\nup_total\nnotes_build_info\n\ncache_hits\n"
	if err := os.WriteFile(path, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	a := "# HELP up_total help\nhttp_requests_total{route=\"/\"} 3\ncache_hits_total 1\n"
	b := "notes_build_info 1\n"
	got, err := Missing(path, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"up_total", "cache_hits"}; !slices.Equal(got, want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
	if _, err := Missing(filepath.Join(t.TempDir(), "absent.txt")); err == nil {
		t.Fatal("Missing of an absent list: no error")
	}
}
