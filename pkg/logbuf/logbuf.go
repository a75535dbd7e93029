// Package logbuf is a log sink for tests: a server's goroutines write to
// it while the test reads it, which a bare bytes.Buffer does not allow.
// Every service test that captures logs or a command's output uses it.
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that is safe for concurrent Write and String.
// The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Len is the number of bytes written so far.
func (l *Buffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// Reset discards everything written so far, as a benchmark that logs on
// every iteration does to keep the buffer from growing.
func (l *Buffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
