package logbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites is meant for -race: writers and a reader at once,
// and no line lost or torn.
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 800 || b.Len() != 800*len("line\n") {
		t.Fatalf("%d lines, %d bytes; want 800 lines", n, b.Len())
	}
}

func TestReset(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("old\n"))
	b.Reset()
	_, _ = b.Write([]byte("new\n"))
	if b.String() != "new\n" {
		t.Fatalf("after Reset: %q, want only what came after", b.String())
	}
}
