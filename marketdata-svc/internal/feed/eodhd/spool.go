package eodhd

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// spool is a bulk answer written to a file as it arrives, by a goroutine
// of its own, and read from the file by any number of readers, each from
// the start, waiting for the bytes still to come. The load streams the day
// while it is downloaded, and the download runs at the network's pace,
// not the database's (the request's timeout covers the body), and a load
// that re-reads the day (a staged retry) reads the file.
type spool struct {
	f    *os.File
	mu   sync.Mutex
	more *sync.Cond
	size int64 // bytes written
	done bool  // the answer is complete, or failed (err)
	err  error
	stop bool // Close was called: the writer stops
}

// newSpool starts writing body to f.
func newSpool(f *os.File, body io.ReadCloser) *spool {
	s := &spool{f: f}
	s.more = sync.NewCond(&s.mu)
	go s.fill(body)
	return s
}

func (s *spool) fill(body io.ReadCloser) {
	defer body.Close()
	buf := make([]byte, 256<<10)
	var off int64
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := s.f.WriteAt(buf[:n], off); werr != nil && err == nil {
				err = werr
			}
			off += int64(n)
		}
		s.mu.Lock()
		s.size = off
		if err != nil || s.stop {
			s.done = true
			if err != io.EOF {
				s.err = err
			}
		}
		done := s.done
		if done && s.stop {
			s.f.Close() // #nosec G104 -- after Close, which removes the file: the last user closes it, nothing to report
		}
		s.mu.Unlock()
		s.more.Broadcast()
		if done {
			return
		}
	}
}

// Close stops the writer and removes the file, closed now or, while the
// writer waits for the body, when it returns.
func (s *spool) Close() error {
	s.mu.Lock()
	s.stop = true
	if s.done {
		s.f.Close() // #nosec G104 -- the spool is removed below; the Remove error is the one returned
	}
	s.mu.Unlock()
	return os.Remove(s.f.Name())
}

// reader returns a reader of the answer from its start.
func (s *spool) reader() io.Reader { return &spoolReader{s: s} }

type spoolReader struct {
	s   *spool
	off int64
}

func (r *spoolReader) Read(p []byte) (int, error) {
	s := r.s
	s.mu.Lock()
	for r.off >= s.size && !s.done {
		s.more.Wait()
	}
	size, err := s.size, s.err
	s.mu.Unlock()
	if r.off >= size {
		if err != nil {
			return 0, fmt.Errorf("%s: read bulk answer: %w", Name, err)
		}
		return 0, io.EOF
	}
	n, err := s.f.ReadAt(p[:min(int64(len(p)), size-r.off)], r.off)
	r.off += int64(n)
	if err == io.EOF {
		err = nil // the writer is ahead of what the file showed
	}
	return n, err
}
