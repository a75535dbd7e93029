package httpapi

import (
	"net/http"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/etag"
)

// Cache-Control of market data. Prices change only when data is imported,
// at a moment no client can predict, and this service promises that nobody
// reads stale prices after an import: so clients may store answers but must
// revalidate each time. The strong ETag makes that revalidation a cheap 304.
const (
	cacheMarketData = "private, no-cache"
	cacheStatic     = "public, max-age=3600"
)

// sendJSON answers 200 with body, its strong ETag (a 64-bit xxhash of the
// exact bytes, so equal bytes give equal tags across instances) and
// cacheControl, or 304 when If-None-Match already names the tag.
func sendJSON(c *gin.Context, body []byte, cacheControl string) {
	sendTaggedJSON(c, body, etagOf(body), cacheControl)
}

// etagOf is the strong ETag of body.
func etagOf(body []byte) string {
	var tag [18]byte
	tag[0], tag[17] = '"', '"'
	sum := xxhash.Sum64(body)
	for i := 16; i >= 1; i-- {
		tag[i] = hexDigit[sum&0xf]
		sum >>= 4
	}
	return string(tag[:])
}

// sendTaggedJSON is sendJSON with body's ETag already known.
func sendTaggedJSON(c *gin.Context, body []byte, tag, cacheControl string) {
	h := c.Writer.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", cacheControl)
	if etag.NoneMatch(c.Request.Header.Values("If-None-Match"), tag) {
		c.Status(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(body)
}

const hexDigit = "0123456789abcdef"
