package ginauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

type oneKey struct{ hash auth.Hash }

func (s oneKey) LookupKey(_ context.Context, h auth.Hash) (auth.Principal, error) {
	if h != s.hash {
		return auth.Principal{}, auth.ErrInvalidKey
	}
	return auth.Principal{AccountID: "acc-1", KeyID: "k1"}, nil
}

func TestMiddleware(t *testing.T) {
	gin.SetMode(gin.TestMode)
	key, hash, err := auth.Generate(auth.NotesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.NewAuthenticator(auth.Options{Prefix: auth.NotesPrefix, Store: oneKey{hash},
		Throttle: auth.NewFailureThrottle(2, time.Minute, 100, nil)})
	r := gin.New()
	r.Use(Middleware(a, auth.BearerHeader(), func(c *gin.Context, err error) {
		var te *auth.ThrottledError
		switch {
		case errors.As(err, &te):
			c.String(http.StatusTooManyRequests, "throttled")
		case errors.Is(err, auth.ErrMissingKey):
			c.String(http.StatusUnauthorized, "missing")
		default:
			c.String(http.StatusUnauthorized, "invalid")
		}
	}))
	r.GET("/", func(c *gin.Context) {
		p, _ := auth.PrincipalFrom(c.Request.Context())
		c.String(http.StatusOK, p.AccountID)
	})
	call := func(header string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "10.0.0.1:1234"
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	for _, c := range []struct {
		header string
		code   int
		body   string
	}{
		{"", 401, "missing"},
		{"Bearer " + key, 200, "acc-1"},
		{"Bearer ", 401, "invalid"},          // an empty key counts as a failure of the address
		{"Bearer tdn_wrong", 401, "invalid"}, // the second failure reaches the limit
		{"Bearer tdn_wrong", 429, "throttled"},
	} {
		if code, body := call(c.header); code != c.code || body != c.body {
			t.Errorf("%q: %d %q, want %d %q", c.header, code, body, c.code, c.body)
		}
	}
}
