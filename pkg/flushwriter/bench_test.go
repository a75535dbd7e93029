package flushwriter

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/accesslog"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
)

// BenchmarkAccessLoggedRequest serves one request through the access log
// into a pipe drained by another goroutine, as a container's stdout is:
// "direct" is a write system call per line (the services before this
// package), "buffered" this Writer with its defaults.
func BenchmarkAccessLoggedRequest(b *testing.B) {
	for _, mode := range []string{"direct", "buffered"} {
		b.Run(mode, func(b *testing.B) {
			r, pw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			drained := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, r); close(drained) }()
			var out io.Writer = pw
			var fw *Writer
			if mode == "buffered" {
				fw = New(pw, Options{})
				out = fw
			}
			gin.SetMode(gin.ReleaseMode)
			e := gin.New()
			e.Use(httpedge.RequestID(), accesslog.New(out, nil).Middleware(nil))
			e.GET("/v1/notes/:id", func(c *gin.Context) { c.String(http.StatusOK, "{}") })
			req := httptest.NewRequest(http.MethodGet, "/v1/notes/note_01J9Z3?x=1", nil)
			rec := httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rec.Body.Reset()
				e.ServeHTTP(rec, req)
			}
			b.StopTimer()
			if fw != nil {
				_ = fw.Close()
			}
			pw.Close()
			<-drained
			r.Close()
		})
	}
}
