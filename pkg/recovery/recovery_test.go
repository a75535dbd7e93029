package recovery

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/logbuf"
)

// waitFor returns the log once it holds s, or what it holds after a second:
// the client may see the response end before the server's log line lands.
func waitFor(b *logbuf.Buffer, s string) string {
	deadline := time.Now().Add(time.Second)
	for !strings.Contains(b.String(), s) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return b.String()
}

func server(t *testing.T, logs *logbuf.Buffer) *httptest.Server {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	log := slog.New(slog.NewJSONHandler(logs, nil))
	e.Use(Middleware(log, func(*gin.Context) string { return "req-1" }, func(c *gin.Context, err error) {
		if !errors.Is(err, ErrPanic) {
			t.Errorf("answer got %v, want an ErrPanic", err)
		}
		c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal"})
	}))
	e.GET("/before", func(*gin.Context) { panic("boom before") })
	e.GET("/after", func(c *gin.Context) {
		c.Status(http.StatusOK)
		_, _ = c.Writer.Write([]byte(`{"partial":`))
		c.Writer.Flush()
		panic("boom after")
	})
	e.GET("/abort", func(*gin.Context) { panic(http.ErrAbortHandler) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

func TestPanicBeforeWritingIsTheServicesAnswer(t *testing.T) {
	var logs logbuf.Buffer
	srv := server(t, &logs)
	res, err := http.Get(srv.URL + "/before")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 || string(body) != `{"error":"internal"}` {
		t.Errorf("got %d %s", res.StatusCode, body)
	}
	line := waitFor(&logs, "boom before")
	if !strings.Contains(line, `"request_id":"req-1"`) || !strings.Contains(line, "boom before") || !strings.Contains(line, "recovery_test.go") {
		t.Errorf("log line lacks the request id, the panic or its stack: %s", line)
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("want the panic logged once, got %s", line)
	}
}

func TestPanicAfterWritingBreaksTheResponse(t *testing.T) {
	var logs logbuf.Buffer
	srv := server(t, &logs)
	res, err := http.Get(srv.URL + "/after")
	if err == nil {
		_, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("a response cut by a panic read as complete (err %v)", err)
	}
	if !strings.Contains(waitFor(&logs, "boom after"), "boom after") {
		t.Errorf("panic after writing not logged: %s", logs.String())
	}
}

func TestAbortHandlerPassesUnlogged(t *testing.T) {
	var logs logbuf.Buffer
	srv := server(t, &logs)
	if res, err := http.Get(srv.URL + "/abort"); err == nil {
		res.Body.Close()
		t.Errorf("an aborted handler answered %d", res.StatusCode)
	}
	time.Sleep(50 * time.Millisecond)
	if logs.Len() != 0 {
		t.Errorf("http.ErrAbortHandler was logged: %s", logs.String())
	}
}
