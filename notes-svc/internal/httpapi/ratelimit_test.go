package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/pkg/keyrate"
)

// TestRateLimitPerKey: with a rate of 2 per second, a key gets a burst of
// two requests, then 429 in problem+json with Retry-After, until its next
// request is due; every answer to a valid key carries the limit headers
// marketdata-svc sends. Another key keeps its own rate, and the
// unversioned alias counts against the same one.
func TestRateLimitPerKey(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := newHarnessWith(t, func(o *httpapi.Options) {
		o.RateLimit = keyrate.NewLimiter(2, func() time.Time { return now })
	})
	headers := func(resp *http.Response) map[string]string {
		out := map[string]string{}
		for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy", "Retry-After"} {
			if v := resp.Header.Get(k); v != "" {
				out[k] = v
			}
		}
		return out
	}
	same := func(a, b map[string]string) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if b[k] != v {
				return false
			}
		}
		return true
	}
	for i, remaining := range []string{"1", "0"} {
		resp, body := h.do("GET", "/v1/notes?limit=1", h.alice, "", nil)
		want := map[string]string{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": "1",
			"RateLimit": `"second";r=` + remaining + ";t=1", "RateLimit-Policy": `"second";q=2;w=1`}
		if resp.StatusCode != http.StatusOK || !same(headers(resp), want) {
			t.Fatalf("request %d: %d %v, want 200 %v: %s", i+1, resp.StatusCode, headers(resp), want, body)
		}
	}
	for _, path := range []string{"/v1/notes?limit=1", "/notes?limit=1"} {
		resp, body := h.do("GET", path, h.alice, "", nil)
		want := map[string]string{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1",
			"RateLimit": `"second";r=0;t=1`, "RateLimit-Policy": `"second";q=2;w=1`, "Retry-After": "1"}
		var p struct {
			Type   string `json:"type"`
			Status int    `json:"status"`
		}
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal([]byte(body), &p) != nil || p.Type != "https://tickerdesk.dev/problems/rate-limited" || p.Status != 429 ||
			!same(headers(resp), want) {
			t.Fatalf("%s over the rate: %d %s %v, want 429 rate-limited %v: %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), headers(resp), want, body)
		}
	}
	if resp, body := h.do("POST", "/v1/notes", h.bob, `{"title":"t","content":"c"}`, nil); resp.StatusCode != http.StatusCreated ||
		resp.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("another key: %d %v: %s", resp.StatusCode, headers(resp), body)
	}
	// A request without a valid key is not counted against any, and says
	// nothing of a limit.
	if resp, _ := h.do("GET", "/v1/notes", "tdn_not-a-key", "", nil); resp.StatusCode != http.StatusUnauthorized || len(headers(resp)) != 0 {
		t.Fatalf("invalid key: %d %v, want 401 without limit headers", resp.StatusCode, headers(resp))
	}
	// The refusals cost nothing: one emission interval on, one more.
	now = now.Add(500 * time.Millisecond)
	if resp, body := h.do("GET", "/v1/notes?limit=1", h.alice, "", nil); resp.StatusCode != http.StatusOK || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("after 500ms: %d %v: %s", resp.StatusCode, headers(resp), body)
	}
}

// TestRateLimitOff: without a limiter (NOTES_RATE_LIMIT_PER_SECOND=0) no
// request is refused for its rate and no answer carries limit headers.
func TestRateLimitOff(t *testing.T) {
	h := newHarness(t)
	for i := range 100 {
		resp, body := h.do("GET", "/v1/notes?limit=1", h.alice, "", nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Policy") != "" || resp.Header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("request %d: %d %v: %s", i, resp.StatusCode, resp.Header, body)
		}
	}
}
