package httpedge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func TestRequestID(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.Use(RequestID())
	e.GET("/", func(c *gin.Context) { c.String(http.StatusOK, RequestIDOf(c)) })
	for _, c := range []struct {
		sent string
		kept bool
	}{{"abc-123", true}, {"", false}, {"has space", false}, {strings.Repeat("x", 129), false}} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.sent != "" {
			req.Header.Set("X-Request-ID", c.sent)
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		echoed := w.Header().Get("X-Request-ID")
		if echoed != w.Body.String() || echoed == "" {
			t.Errorf("sent %q: echoed %q, handler saw %q", c.sent, echoed, w.Body.String())
		}
		if (echoed == c.sent) != c.kept {
			t.Errorf("sent %q: echoed %q, kept = %v", c.sent, echoed, c.kept)
		}
	}
}

func TestTimeoutBoundsTheContext(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.GET("/bounded", Timeout(time.Minute), func(c *gin.Context) {
		if _, ok := c.Request.Context().Deadline(); !ok {
			t.Error("no deadline with a timeout")
		}
	})
	e.GET("/open", Timeout(0), func(c *gin.Context) {
		if _, ok := c.Request.Context().Deadline(); ok {
			t.Error("deadline with a zero timeout")
		}
	})
	for _, p := range []string{"/bounded", "/open"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
}

func TestEngineSettings(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e, err := NewEngine(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.NoMethod(func(c *gin.Context) { c.String(http.StatusMethodNotAllowed, "ours") })
	e.NoRoute(func(c *gin.Context) { c.String(http.StatusNotFound, "ours") })
	e.GET("/things/:id", func(c *gin.Context) { c.String(http.StatusOK, c.Param("id")+"|"+c.ClientIP()) })
	call := func(method, target string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		req.RemoteAddr = "10.1.2.3:5"
		for k, v := range header {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		return w
	}
	if w := call(http.MethodPost, "/things/1", nil); w.Code != http.StatusMethodNotAllowed || w.Body.String() != "ours" {
		t.Errorf("POST: %d %q, want our 405", w.Code, w.Body.String())
	}
	if w := call(http.MethodGet, "/things/1/", nil); w.Code != http.StatusNotFound || w.Body.String() != "ours" {
		t.Errorf("trailing slash: %d %q, want our 404 and no redirect", w.Code, w.Body.String())
	}
	if w := call(http.MethodGet, "/things/a%2Fb", nil); w.Code != http.StatusOK || w.Body.String() != "a/b|10.1.2.3" {
		t.Errorf("escaped slash: %d %q, want the value a/b", w.Code, w.Body.String())
	}
	if w := call(http.MethodGet, "/things/1", http.Header{"X-Forwarded-For": {"203.0.113.9"}}); w.Body.String() != "1|10.1.2.3" {
		t.Errorf("X-Forwarded-For from an untrusted peer was believed: %q", w.Body.String())
	}
	if _, err := NewEngine([]string{"not an address"}); err == nil {
		t.Error("bad trusted proxy accepted")
	}
}

// BenchmarkRequestID is the edge's per-request cost of the id: a caller's
// id kept and echoed.
func BenchmarkRequestID(b *testing.B) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.Use(RequestID())
	e.GET("/", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-Request-ID", "abc-123")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
	}
}
