// Package transport is what notesclient and marketdataclient send their
// requests through: the options both take, the check of the base URL, and
// retries of 429 and 503 answers that honour Retry-After. The two clients
// must retry the same way, so the rules live here once.
package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Retry defaults: a few attempts, and never a wait longer than a caller
// would sit through without being told (a monthly quota's Retry-After is
// returned as the error instead).
const (
	DefaultRetries      = 2
	DefaultMaxRetryWait = 30 * time.Second
	// firstBackoff is the wait before the first retry of an answer
	// without Retry-After; it doubles with each attempt.
	firstBackoff = 500 * time.Millisecond
	// defaultTimeout bounds a request of the default HTTP client.
	defaultTimeout = 30 * time.Second
)

// Settings are the options of a client; each client package's Option
// functions set them, under names of its own.
type Settings struct {
	// Key is the API or access key; each client sends it its own way.
	Key string
	// HTTPClient sends the requests; nil means one with a 30 s timeout.
	HTTPClient *http.Client
	// Retries is how many times an answer of 429 or 503 is sent again.
	Retries int
	// MaxRetryWait is the longest Retry-After waited for.
	MaxRetryWait time.Duration
	// Sleep waits between retries; tests record the waits instead.
	Sleep func(ctx context.Context, d time.Duration) error
}

// New applies opts to the default settings and returns them with the Doer
// the generated client must send its requests through. name labels the
// error of a baseURL that is not an absolute http(s) URL.
func New[O ~func(*Settings)](name, baseURL string, opts []O) (Settings, *Doer, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Settings{}, nil, fmt.Errorf("%s: base URL %q is not an http(s) URL", name, baseURL)
	}
	s := Settings{Retries: DefaultRetries, MaxRetryWait: DefaultMaxRetryWait, Sleep: sleepContext}
	for _, opt := range opts {
		opt(&s)
	}
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	d := &Doer{hc: s.HTTPClient, max: max(s.Retries, 0), maxWait: s.MaxRetryWait, sleep: s.Sleep, now: time.Now}
	return s, d, nil
}

// Doer sends requests through an HTTP client and sends them again, up to
// Settings.Retries times, when the answer is 429 or 503, after the wait
// Retry-After asks for. It is the HttpRequestDoer the generated clients
// use, so every operation, wrapped or not, retries the same way.
type Doer struct {
	hc      *http.Client
	max     int
	maxWait time.Duration
	// sleep waits d or until ctx ends; tests replace it to record waits.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// Do sends req, retrying as described on Doer. A retried request is
// a clone with a fresh body from GetBody, so its headers (the
// Idempotency-Key among them) are the same on every attempt.
func (d *Doer) Do(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(req.Context())
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := d.hc.Do(r)
		if err != nil {
			return nil, err
		}
		if attempt >= d.max || !retryable(req, resp.StatusCode) {
			return resp, nil
		}
		wait, ok := retryWait(resp.Header.Get("Retry-After"), attempt, d.now())
		if !ok || wait > d.maxWait {
			return resp, nil
		}
		// Drain so the connection can be reused for the retry.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if err := d.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryable reports whether an answer with status may be retried: 429 and
// 503 say the request was not served, but a 503 can come after a write
// was done, so a POST or PATCH is retried only with an Idempotency-Key,
// which makes the server replay instead of writing twice, and a body
// that cannot be read again (no GetBody) is never retried.
func retryable(req *http.Request, status int) bool {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodPost, http.MethodPatch:
		return req.Header.Get("Idempotency-Key") != ""
	}
	return true
}

// retryWait is the wait Retry-After asks for (delta-seconds or an
// HTTP-date), or, without one, a backoff that doubles with each attempt.
// ok is false for a value that is neither.
func retryWait(header string, attempt int, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return firstBackoff << attempt, true
	}
	if secs, err := strconv.ParseInt(header, 10, 64); err == nil {
		if secs < 0 || secs > int64(24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(header); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// sleepContext waits d, or returns ctx's error if ctx ends first.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
