// Package bodydrain lets a server answer a request before reading its body
// (413 for a body over the limit, 401 for a missing key, 415 for a wrong
// type) without the client losing that answer.
//
// When a server closes a connection while the client is still sending, the
// kernel answers the unread bytes with a reset, and a reset can destroy the
// answer in the client's receive buffer before the client reads it: a client
// that sends its whole body before reading (Python's requests, many scripts)
// then sees "connection reset" instead of the documented 413. net/http reads
// at most 256 KB of an unread body and lingers half a second before it
// closes. Drain goes further, within fixed bounds: it sends the answer at
// once, so a client that reads while it writes can stop, then discards the
// rest of the body for up to MaxBytes or MaxWait, so the connection ends
// cleanly (and can even be reused). Only a client that sends more than that
// can still meet a reset, and it is told to close by the answer.
package bodydrain

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Bounds of the discarding: enough for any body a client would plausibly
// send to an API whose limit is a few MiB, small enough that a hostile
// client gains nothing over sending the same bytes in valid requests.
const (
	MaxBytes = 64 << 20
	MaxWait  = 5 * time.Second
)

// Body is a request body that records whether it was read to the end.
type Body struct {
	io.ReadCloser
	eof bool
}

// Read reads from the body and notes its end.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Track wraps r's body so Drain can tell whether the handler read it all.
// It returns nil for a request without a body, for which there is nothing
// to drain.
func Track(r *http.Request) *Body {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil
	}
	b := &Body{ReadCloser: r.Body}
	r.Body = b
	return b
}

// Drain is called after the handler has written its answer. When the body
// was not read to the end, it flushes the answer to the client and then
// discards the rest of the body, at most MaxBytes for at most MaxWait.
func (b *Body) Drain(w http.ResponseWriter) {
	if b == nil || b.eof {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(MaxWait))
	// The wrapped body, not any MaxBytesReader the handler put over it:
	// that one refuses to read past its limit.
	_, _ = io.CopyN(io.Discard, b.ReadCloser, MaxBytes)
	_ = rc.SetReadDeadline(time.Time{})
}
