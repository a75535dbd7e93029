package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
)

// MaxResponseBytes is how much of a response is read: enough to reuse the
// connection after a short answer, never a receiver's whole stream.
const MaxResponseBytes = 64 << 10

// sender makes one attempt.
type sender struct {
	client    *http.Client
	userAgent string
}

// result is the outcome of an attempt.
type result struct {
	status  int
	latency time.Duration
	read    int64
	err     error
}

func (r result) ok() bool { return r.err == nil && r.status >= 200 && r.status < 300 }

// describe is the delivery log's last_error: the status or the transport
// failure, never the response body.
func (r result) describe() string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case !r.ok():
		return fmt.Sprintf("endpoint answered %d", r.status)
	}
	return ""
}

// send POSTs body, signed at now with secrets, to target.
func (s *sender) send(ctx context.Context, target, eventID string, body []byte, secrets []string, now time.Time) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return result{err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	req.Header.Set(webhook.EventIDHeader, eventID)
	req.Header.Set(webhook.SignatureHeader, webhook.Signature(now, body, secrets...))
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		// *url.Error quotes the URL, whose query may hold the receiver's
		// own token: the log and the delivery log get the cause alone.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return result{latency: time.Since(start), err: fmt.Errorf("post: %w", err)}
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	_ = resp.Body.Close()
	return result{status: resp.StatusCode, latency: time.Since(start), read: n}
}
