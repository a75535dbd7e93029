package routetable_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/routetable"
)

// newEngine has a router's two kinds of routes: open ones, and a group
// behind a key check, as both services build them.
func newEngine(extra ...string) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.GET("/healthz", func(c *gin.Context) { c.Status(http.StatusOK) })
	e.GET("/docs/*asset", func(c *gin.Context) { c.Status(http.StatusNotFound) })
	keyed := e.Group("/v1", func(c *gin.Context) {
		if c.GetHeader("Authorization") == "" {
			c.AbortWithStatus(http.StatusUnauthorized)
		}
	})
	keyed.GET("/things/:id", func(c *gin.Context) { c.Status(http.StatusOK) })
	keyed.POST("/things", func(c *gin.Context) { c.Status(http.StatusCreated) })
	for _, p := range extra {
		keyed.GET(p, func(c *gin.Context) { c.Status(http.StatusOK) })
	}
	return e
}

func TestRoutesClassifiesByKey(t *testing.T) {
	got := routetable.Render("svc", routetable.Routes(newEngine()))
	want := "GET /docs/*asset internal\nGET /healthz internal\nPOST /v1/things public\nGET /v1/things/:id public\n"
	if _, body, _ := strings.Cut(string(got), "stale.\n"); body != want {
		t.Errorf("rendered:\n%s\nwant the routes:\n%s", got, want)
	}
}

func TestSyncFailsWhenStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.txt")
	if err := routetable.Sync(path, "svc", newEngine(), false); err == nil {
		t.Fatal("a missing file passes")
	}
	if err := routetable.Sync(path, "svc", newEngine(), true); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := routetable.Sync(path, "svc", newEngine(), false); err != nil {
		t.Fatalf("the file just written: %v", err)
	}
	err := routetable.Sync(path, "svc", newEngine("/news"), false)
	if err == nil || !strings.Contains(err.Error(), "GET /v1/news public") {
		t.Fatalf("a new route passes: %v", err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "/v1/news") {
		t.Fatal("compared without update, the file was rewritten")
	}
}
