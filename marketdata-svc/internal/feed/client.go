package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// ClientOptions configure the HTTP client of one provider.
type ClientOptions struct {
	// Provider names the provider in logs and errors.
	Provider string
	// BaseURL is the provider's API root; paths are appended to it.
	BaseURL string
	// Token is the credential. TokenParam names the query parameter that
	// carries it (access_key, api_token); when empty and Token is set, it
	// goes in the Authorization header as "Token <token>".
	Token, TokenParam string
	// Timeout bounds one request, body included.
	Timeout time.Duration
	// Retries is how many times a 429, a 5xx or a failed connection is
	// retried; Backoff is the first wait, doubled each time up to
	// MaxBackoff, with jitter (a Retry-After answer sets the wait).
	Retries             int
	Backoff, MaxBackoff time.Duration
	// RatePerMinute and Burst shape the token bucket every request of
	// the provider takes a token from.
	RatePerMinute, Burst int
	Log                  *slog.Logger
	// Transport replaces http.DefaultTransport (TLS verified).
	Transport http.RoundTripper
	// UserAgent, when set, is sent as the User-Agent (SEC EDGAR refuses
	// requests that do not name who sends them).
	UserAgent string
}

// Client sends a provider's requests: it holds the token bucket, retries
// and the credential, and never lets the credential reach a log line or
// an error (URLs are written through auth.RedactURL).
type Client struct {
	o      ClientOptions
	base   *url.URL
	http   *http.Client
	bucket *bucket
}

// NewClient returns the client o describes.
func NewClient(o ClientOptions) (*Client, error) {
	base, err := url.Parse(strings.TrimSuffix(o.BaseURL, "/"))
	if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, fmt.Errorf("%s: invalid base url", o.Provider)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	tr := o.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	hc := &http.Client{
		Transport: tr,
		// A redirect to another host would carry the credential (a query
		// parameter) where it was never meant to go: refused.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != via[0].URL.Host || len(via) >= 5 {
				return errRedirect
			}
			return nil
		},
	}
	return &Client{o: o, base: base, http: hc, bucket: newBucket(o.RatePerMinute, o.Burst)}, nil
}

var errRedirect = errors.New("redirect to another host refused")

// Name is the provider's name; an adapter embedding its Client answers
// feed.Provider's Name with it.
func (c *Client) Name() string { return c.o.Provider }

// StatusError is an answer whose status is neither a success nor one the
// adapters classify.
type StatusError struct {
	Status int
	// URL is redacted.
	URL string
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d from %s", e.Status, e.URL) }

// Get sends GET path?query with the credential, retrying 429, 5xx and
// connection failures, and returns a 2xx answer's body, which the caller
// closes. 401 and 403 are ErrUnauthorized, 404 ErrUnknownSymbol, others a
// *StatusError; check, when set, reads other answers first (a provider that
// says "unknown symbol" with 422) and returns nil to fall through.
func (c *Client) Get(ctx context.Context, path string, query url.Values, check func(status int, body []byte) error) (io.ReadCloser, error) {
	u := *c.base
	u.Path = c.base.Path + path
	if query == nil {
		query = url.Values{}
	}
	if c.o.Token != "" && c.o.TokenParam != "" {
		query.Set(c.o.TokenParam, c.o.Token)
	}
	u.RawQuery = query.Encode()
	shown := c.base.Scheme + "://" + c.base.Host + auth.RedactURL(&u)
	for attempt := 0; ; attempt++ {
		if err := c.bucket.wait(ctx); err != nil {
			return nil, err
		}
		body, status, retryAfter, err := c.once(ctx, &u)
		if err == nil && status/100 == 2 {
			return body, nil
		}
		retryable := err != nil || status == http.StatusTooManyRequests || status >= 500
		if err != nil && (errors.Is(err, errRedirect) || ctx.Err() != nil) {
			retryable = false
		}
		if !retryable || attempt >= c.o.Retries {
			if err != nil {
				return nil, fmt.Errorf("%s: GET %s: %w", c.o.Provider, shown, err)
			}
			return nil, c.statusError(status, shown, body, check)
		}
		if body != nil {
			body.Close()
		}
		wait := c.backoff(attempt, retryAfter)
		c.o.Log.Warn("provider request retried", "provider", c.o.Provider, "url", shown, "status", status,
			"err", errText(err), "attempt", attempt+1, "wait", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// once sends one request. A transport error is reduced to its cause,
// without the URL that *url.Error would print with the credential in it.
func (c *Client) once(ctx context.Context, u *url.URL) (io.ReadCloser, int, time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, 0, 0, errors.New("cannot build request")
	}
	if c.o.Token != "" && c.o.TokenParam == "" {
		req.Header.Set("Authorization", "Token "+c.o.Token)
	}
	req.Header.Set("Accept", "application/json, text/csv")
	if c.o.UserAgent != "" {
		req.Header.Set("User-Agent", c.o.UserAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("timed out after %s", c.o.Timeout)
		}
		return nil, 0, 0, err
	}
	return &cancelBody{ReadCloser: resp.Body, cancel: cancel}, resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), nil
}

// cancelBody ends the request's deadline when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (c *Client) statusError(status int, shown string, body io.ReadCloser, check func(int, []byte) error) error {
	var msg []byte
	if body != nil {
		msg, _ = io.ReadAll(io.LimitReader(body, 64<<10))
		body.Close()
	}
	if check != nil {
		if err := check(status, msg); err != nil {
			return err
		}
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%s: status %d: %w", c.o.Provider, status, ErrUnauthorized)
	case http.StatusNotFound:
		return ErrUnknownSymbol
	}
	return &StatusError{Status: status, URL: shown}
}

// backoff is the wait before retry attempt+1: the answer's Retry-After
// when it gave one (capped at MaxBackoff), else Backoff doubled per
// attempt, capped, with "equal jitter" (half fixed, half random), so
// that workers retrying together spread out.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, c.o.MaxBackoff)
	}
	d := c.o.Backoff << min(attempt, 30)
	if d <= 0 || d > c.o.MaxBackoff {
		d = c.o.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// bucket is a token bucket: RatePerMinute tokens a minute, at most Burst
// saved up. Every request of a provider waits for a token.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(perMinute, burst int) *bucket {
	b := &bucket{rate: float64(max(perMinute, 1)) / 60, burst: float64(max(burst, 1)), last: time.Now()}
	b.tokens = b.burst
	return b
}

func (b *bucket) wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		now := time.Now()
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
		if b.tokens >= 1 {
			b.tokens--
			b.mu.Unlock()
			return nil
		}
		need := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
		b.mu.Unlock()
		t := time.NewTimer(need)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
