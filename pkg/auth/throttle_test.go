package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func TestFailureThrottle(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := NewFailureThrottle(3, time.Minute, 100, func() time.Time { return now })
	for range 3 {
		if err := th.Check("1.2.3.4"); err != nil {
			t.Fatalf("blocked too early: %v", err)
		}
		th.Fail("1.2.3.4")
	}
	err := th.Check("1.2.3.4")
	var te *ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) || te.RetryAfter != time.Minute {
		t.Fatalf("Check after limit = %v", err)
	}
	if err := th.Check("5.6.7.8"); err != nil {
		t.Fatalf("other client blocked: %v", err)
	}
	now = now.Add(time.Minute)
	if err := th.Check("1.2.3.4"); err != nil {
		t.Fatalf("still blocked after the window: %v", err)
	}
}

func TestFailureThrottleIsBounded(t *testing.T) {
	th := NewFailureThrottle(1, time.Minute, 10, nil)
	for i := range 1000 {
		th.Fail(strconv.Itoa(i))
	}
	if len(th.clients) > 10 {
		t.Fatalf("throttle tracks %d clients, bound is 10", len(th.clients))
	}
}

func TestMiddlewareThrottlesBadKeysWithoutStore(t *testing.T) {
	gin.SetMode(gin.TestMode)
	store := &fakeStore{t: t}
	good := newKey(t, store, Principal{AccountID: "acc"})
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store, Throttle: NewFailureThrottle(5, time.Minute, 100, nil)})
	r := gin.New()
	r.Use(a.Middleware(BearerHeader(), func(c *gin.Context, err error) {
		var te *ThrottledError
		if errors.As(err, &te) {
			c.String(http.StatusTooManyRequests, "throttled")
			return
		}
		c.String(http.StatusUnauthorized, err.Error())
	}))
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	call := func(key, ip string) int {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = ip + ":1234"
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code
	}
	for i := range 5 {
		if code := call("tdn_wrong", "10.0.0.1"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i, code)
		}
	}
	if code := call("tdn_wrong", "10.0.0.1"); code != http.StatusTooManyRequests {
		t.Fatalf("sixth bad attempt: %d, want 429", code)
	}
	// A blocked address is refused even with a good key; others are not.
	store.failOnCall = true
	if code := call(good, "10.0.0.1"); code != http.StatusTooManyRequests {
		t.Fatalf("good key from blocked address: %d, want 429", code)
	}
	store.failOnCall = false
	if code := call(good, "10.0.0.2"); code != http.StatusOK {
		t.Fatalf("good key from another address: %d, want 200", code)
	}
}
