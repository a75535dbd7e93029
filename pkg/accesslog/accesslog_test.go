package accesslog

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
)

func TestLineRedactsAndNamesTheCaller(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var buf bytes.Buffer
	e := gin.New()
	e.Use(httpedge.RequestID(), New(&buf, nil).Middleware(nil, "q"))
	e.GET("/v1/things/:id", func(c *gin.Context) {
		c.Request = c.Request.WithContext(auth.WithPrincipal(c.Request.Context(), auth.Principal{AccountID: "acc-1", KeyID: "key-1"}))
		c.String(http.StatusTeapot, "body")
	})
	req := httptest.NewRequest(http.MethodGet, "/v1/things/7?access_key=tdm_secret&q=private+words&limit=5", nil)
	req.Header.Set("X-Request-ID", "req-42")
	e.ServeHTTP(httptest.NewRecorder(), req)

	line := buf.String()
	for _, secret := range []string{"tdm_secret", "private"} {
		if strings.Contains(line, secret) {
			t.Errorf("log line holds %q: %s", secret, line)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("log line is not one JSON object: %v: %s", err, line)
	}
	want := map[string]any{"msg": "request", "request_id": "req-42", "method": "GET", "route": "/v1/things/:id",
		"status": float64(418), "bytes": float64(4), "account_id": "acc-1", "key_id": "key-1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	// A whole number of microseconds, so that log queries can sum and
	// compare it without parsing a decimal.
	if d, ok := got["duration_us"].(float64); !ok || d < 0 || d != float64(int64(d)) || !strings.Contains(line, `"duration_us":`+strconv.FormatInt(int64(d), 10)+`,`) {
		t.Errorf("duration_us = %v, want a whole number of microseconds: %s", got["duration_us"], line)
	}
	if path, _ := got["path"].(string); !strings.HasPrefix(path, "/v1/things/7?") || !strings.Contains(path, "limit=5") {
		t.Errorf("path = %q, want the path with its harmless parameters", path)
	}
}

func TestUnmatchedMethodAndRouteAreBounded(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var buf bytes.Buffer
	e := gin.New()
	e.Use(httpedge.RequestID(), New(&buf, nil).Middleware(nil))
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/"+strings.Repeat("x", 100), nil))
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["method"] != "OTHER" || got["route"] != "unmatched" {
		t.Errorf("method, route = %v, %v; want OTHER, unmatched", got["method"], got["route"])
	}
}

func TestNoLineBelowTheLevel(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, tc := range []struct {
		level slog.Leveler
		want  bool
	}{{nil, true}, {slog.LevelDebug, true}, {slog.LevelInfo, true}, {slog.LevelWarn, false}, {slog.LevelError, false}} {
		var buf bytes.Buffer
		e := gin.New()
		e.Use(httpedge.RequestID(), New(&buf, tc.level).Middleware(nil))
		e.GET("/x", func(c *gin.Context) { c.Status(http.StatusNoContent) })
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
		if got := buf.Len() > 0; got != tc.want {
			t.Errorf("level %v: wrote a line = %v, want %v", tc.level, got, tc.want)
		}
	}
}

func TestOneWritePerLine(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var w countingWriter
	e := gin.New()
	e.Use(httpedge.RequestID(), New(&w, nil).Middleware(nil))
	e.GET("/x", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	for range 3 {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x?"+strings.Repeat("a", 40_000), nil))
	}
	if w.writes != 3 || strings.Count(w.buf.String(), "\n") != 3 {
		t.Errorf("%d writes, %d lines; want 3 of each, whole", w.writes, strings.Count(w.buf.String(), "\n"))
	}
}

// countingWriter counts Write calls.
type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	if !bytes.HasSuffix(p, []byte("\n")) {
		return 0, errors.New("a write that is not a whole line")
	}
	return w.buf.Write(p)
}
