package flushwriter

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is an underlying writer that counts its writes.
type sink struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
	fail   error
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.fail != nil {
		return 0, s.fail
	}
	return s.b.Write(p)
}

func (s *sink) snapshot() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String(), s.writes
}

// waitFor polls until the sink holds want, up to a deadline far above the
// interval, so that a slow machine cannot fail the test.
func waitFor(t *testing.T, s *sink, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := s.snapshot()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink holds %q, want %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLinesArriveWithoutAFlush(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Interval: 10 * time.Millisecond})
	defer w.Close()
	var want strings.Builder
	for i := range 50 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, s, want.String())
	if _, n := s.snapshot(); n >= 50 {
		t.Errorf("%d underlying writes for 50 lines: not buffered", n)
	}
	// The timer is armed again by the next line into the empty buffer.
	w.Write([]byte("later\n"))
	waitFor(t, s, want.String()+"later\n")
}

func TestCloseFlushesAndLaterWritesPassThrough(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Interval: time.Hour})
	w.Write([]byte("a\n"))
	w.Write([]byte("b\n"))
	if got, _ := s.snapshot(); got != "" {
		t.Fatalf("written before the interval or Close: %q", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.snapshot(); got != "a\nb\n" {
		t.Fatalf("after Close: %q", got)
	}
	w.Write([]byte("c\n"))
	if got, _ := s.snapshot(); got != "a\nb\nc\n" {
		t.Fatalf("a write after Close: %q", got)
	}
}

func TestFullBufferFlushesInOrder(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Size: 8, Interval: time.Hour})
	w.Write([]byte("12345\n")) // 6 bytes buffered
	w.Write([]byte("abc\n"))   // would overflow: the 6 go out first
	if got, _ := s.snapshot(); got != "12345\n" {
		t.Fatalf("after overflow: %q", got)
	}
	w.Write([]byte("a line longer than the buffer\n")) // flushes, then goes straight through
	if got, _ := s.snapshot(); got != "12345\nabc\na line longer than the buffer\n" {
		t.Fatalf("after an oversized line: %q", got)
	}
}

func TestErrorRecordsAreNotDelayed(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Interval: time.Hour})
	defer w.Close()
	log := slog.New(w.Handler(slog.NewTextHandler(w, nil))).With("svc", "x")
	log.Info("request")
	log.Warn("slow")
	if got, _ := s.snapshot(); got != "" {
		t.Fatalf("info and warn lines written at once: %q", got)
	}
	log.Error("boom")
	got, _ := s.snapshot()
	for _, msg := range []string{"msg=request", "msg=slow", "msg=boom", "svc=x"} {
		if !strings.Contains(got, msg) {
			t.Errorf("after the error record the output lacks %q:\n%s", msg, got)
		}
	}
	if strings.Index(got, "msg=request") > strings.Index(got, "msg=boom") {
		t.Errorf("the error line overtook the earlier line:\n%s", got)
	}
}

func TestWriteErrorIsReported(t *testing.T) {
	s := &sink{fail: errors.New("disk full")}
	w := New(s, Options{Size: 4, Interval: time.Hour})
	w.Write([]byte("abc"))
	if _, err := w.Write([]byte("de")); err == nil {
		t.Error("the overflow's failed flush was not reported")
	}
	s.mu.Lock()
	s.fail = nil
	s.mu.Unlock()
	if _, err := w.Write([]byte("fg")); err != nil {
		t.Errorf("a write after the destination recovered: %v", err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the first write error", err)
	}
	if got, _ := s.snapshot(); got != "fg" {
		t.Errorf("after recovery: %q", got)
	}
}

func TestConcurrentLinesStayWhole(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Size: 256, Interval: time.Millisecond})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(w, "g%d-%03d|\n", g, i)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := s.snapshot()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if len(l) != 7 || l[6] != '|' || seen[l] {
			t.Fatalf("torn or repeated line %q", l)
		}
		seen[l] = true
	}
}
