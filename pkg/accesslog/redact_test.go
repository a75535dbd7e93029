package accesslog

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
)

// TestNearSpellingsOfTheKeyNotLogged: a key sent under a near spelling of
// access_key (which no service reads, so the request is refused for a
// missing key) is still absent from the access line, as is one sent under
// a private parameter's near spelling.
func TestNearSpellingsOfTheKeyNotLogged(t *testing.T) {
	gin.SetMode(gin.TestMode)
	const key = "tdm_S3cretKeyValue0123456789"
	for _, query := range []string{
		"access_key%00=" + key, "ACCESS%5FKEY%00=" + key, "access_key+=" + key, "symbols=A;access-key=" + key,
		"access_key=" + key + "&access_key%20=" + key, "x_api_key=" + key, "access_key%3D" + key, "Q%00=" + key,
	} {
		var buf bytes.Buffer
		e := gin.New()
		e.Use(httpedge.RequestID(), New(&buf, nil).Middleware(nil, "q"))
		e.GET("/v1/eod", func(c *gin.Context) { c.Status(http.StatusUnauthorized) })
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/eod?"+query, nil))
		if strings.Contains(buf.String(), "S3cretKeyValue") {
			t.Errorf("?%s: the key is logged: %s", query, buf.String())
		}
	}
}
