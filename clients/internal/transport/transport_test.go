package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/internal/clienttest"
)

// newDoer returns the Doer New makes for a fake service serving h, with
// the waits between retries recorded by the server instead of slept.
func newDoer(t *testing.T, h http.HandlerFunc, opts ...func(*Settings)) (*Doer, *clienttest.Server) {
	t.Helper()
	srv := clienttest.NewServer(t, h)
	test := func(s *Settings) { s.HTTPClient, s.Sleep = srv.Client(), srv.Sleep }
	_, d, err := New("test client", srv.URL, append([]func(*Settings){test}, opts...))
	if err != nil {
		t.Fatal(err)
	}
	return d, srv
}

// send sends req through d and returns the final answer's status.
func send(t *testing.T, d *Doer, req *http.Request) int {
	t.Helper()
	resp, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, srv *clienttest.Server) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestDoerHonoursRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			calls := 0
			d, srv := newDoer(t, func(w http.ResponseWriter, r *http.Request) {
				if calls++; calls <= 2 {
					w.Header().Set("Retry-After", strconv.Itoa(calls*3))
					w.WriteHeader(status)
					return
				}
				w.WriteHeader(http.StatusOK)
			})
			if got := send(t, d, get(t, srv)); got != http.StatusOK || calls != 3 {
				t.Fatalf("status %d after %d calls, want 200 after 3", got, calls)
			}
			if want := []time.Duration{3 * time.Second, 6 * time.Second}; !slices.Equal(srv.Waits(), want) {
				t.Fatalf("waited %v, want %v (the Retry-After of each answer)", srv.Waits(), want)
			}
		})
	}
}

func TestDoerGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opt        func(*Settings)
		retryAfter string
		wantCalls  int
	}{
		{"after Retries attempts", func(s *Settings) { s.Retries = 1 }, "1", 2},
		{"with retries off", func(s *Settings) { s.Retries = 0 }, "1", 1},
		{"when Retry-After is longer than the maximum wait", func(s *Settings) { s.MaxRetryWait = time.Minute }, "61", 1},
		{"when Retry-After is malformed", func(*Settings) {}, "soon", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			d, srv := newDoer(t, func(w http.ResponseWriter, r *http.Request) {
				calls++
				w.Header().Set("Retry-After", tc.retryAfter)
				w.WriteHeader(http.StatusServiceUnavailable)
			}, tc.opt)
			if got := send(t, d, get(t, srv)); got != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want the last answer's 503", got)
			}
			if calls != tc.wantCalls || len(srv.Waits()) != tc.wantCalls-1 {
				t.Fatalf("%d calls and %d waits, want %d calls", calls, len(srv.Waits()), tc.wantCalls)
			}
		})
	}
}

func TestDoerBacksOffWithoutRetryAfter(t *testing.T) {
	calls := 0
	d, srv := newDoer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	if got := send(t, d, get(t, srv)); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	if want := []time.Duration{firstBackoff, 2 * firstBackoff}; !slices.Equal(srv.Waits(), want) {
		t.Fatalf("waited %v, want %v", srv.Waits(), want)
	}
}

func TestDoerResendsTheBodyAndHeaders(t *testing.T) {
	var srv *clienttest.Server
	d, srv := newDoer(t, func(w http.ResponseWriter, r *http.Request) {
		if len(srv.Requests()) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/x", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", "k1")
	if status := send(t, d, req); status != http.StatusCreated {
		t.Fatalf("status %d, want 201 of the retry", status)
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.Header.Get("Idempotency-Key")+" "+r.Body)
	}
	if want := []string{`k1 {"a":1}`, `k1 {"a":1}`}; !slices.Equal(got, want) {
		t.Fatalf("attempts sent %q, want %q", got, want)
	}
}

func TestRetryWaitParsesBothForms(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"2", 2 * time.Second, true},
		{" 0 ", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"tomorrow", 0, false},
	} {
		got, ok := retryWait(tc.header, 0, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryWait(%q) = %v, %v; want %v, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPostWithoutIdempotencyKeyIsNotRetried(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/v1/notes", strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	if retryable(req, http.StatusServiceUnavailable) {
		t.Fatal("a POST without Idempotency-Key would be retried and could create twice")
	}
	req.Header.Set("Idempotency-Key", "k")
	if !retryable(req, http.StatusServiceUnavailable) {
		t.Fatal("a POST with Idempotency-Key is not retried")
	}
	get := httptest.NewRequest(http.MethodGet, "/v1/notes", nil)
	if retryable(get, http.StatusInternalServerError) || !retryable(get, http.StatusTooManyRequests) {
		t.Fatal("only 429 and 503 are retried")
	}
}

func TestNewRejectsABadBaseURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		_, _, err := New[func(*Settings)]("test client", u, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "test client: ") {
			t.Errorf("New(%q) = %v, want an error labelled test client", u, err)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	s, d, err := New[func(*Settings)]("test client", "http://localhost:8080", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Retries != DefaultRetries || s.MaxRetryWait != DefaultMaxRetryWait || s.HTTPClient == nil || s.HTTPClient.Timeout != defaultTimeout {
		t.Fatalf("default settings %+v", s)
	}
	if d.max != DefaultRetries || d.maxWait != DefaultMaxRetryWait || d.hc != s.HTTPClient {
		t.Fatalf("doer %+v does not follow the settings", d)
	}
}
