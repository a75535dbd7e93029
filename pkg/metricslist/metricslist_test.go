package metricslist

import (
	"slices"
	"testing"
)

// TestMissing: a listed name counts as exported only with a sample line of
// its own in some scrape, not as a prefix of another metric's name or in a
// HELP comment.
func TestMissing(t *testing.T) {
	list := "# generated\nhttp_requests_total\nup_total\nnotes_build_info\n\ncache_hits\n"
	a := "# HELP up_total help\nhttp_requests_total{route=\"/\"} 3\ncache_hits_total 1\n"
	b := "notes_build_info 1\n"
	if got, want := Missing(list, a, b), []string{"up_total", "cache_hits"}; !slices.Equal(got, want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
	if got := Missing("# nothing listed\n"); got != nil {
		t.Fatalf("Missing of an empty list = %v, want none", got)
	}
}
