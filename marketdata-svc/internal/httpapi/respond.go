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
	sendTaggedJSON(c, etagOf(body), cacheControl, body)
}

// etagOf is the strong ETag of the body made of parts, in order.
func etagOf(parts ...[]byte) string {
	var d xxhash.Digest
	d.Reset()
	for _, p := range parts {
		_, _ = d.Write(p) // never fails
	}
	sum := d.Sum64()
	var tag [18]byte
	tag[0], tag[17] = '"', '"'
	for i := 16; i >= 1; i-- {
		tag[i] = hexDigit[sum&0xf]
		sum >>= 4
	}
	return string(tag[:])
}

// sendTaggedJSON is sendJSON with the ETag already known, for a body
// made of parts, written in order: a cached page goes out from the cache's
// memory, not copied into one buffer first.
func sendTaggedJSON(c *gin.Context, tag, cacheControl string, parts ...[]byte) {
	h := c.Writer.Header()
	// The ETag and the length share one backing array: one allocation.
	v := [...]string{tag, ""}
	h[hdrETag] = v[0:1:1]
	h[hdrCacheControl] = headerValue(cacheControl)
	if etag.NoneMatch(c.Request.Header[hdrIfNoneMatch], tag) {
		c.Status(http.StatusNotModified)
		return
	}
	h[hdrContentType] = jsonContentType
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	v[1] = strconv.Itoa(n)
	h[hdrContentLength] = v[1:2:2]
	c.Status(http.StatusOK)
	for _, p := range parts {
		if _, err := c.Writer.Write(p); err != nil {
			return // the client left
		}
	}
}

// Header keys in canonical form. Answers assign them to the header map
// directly: Header.Set canonicalises each key, which for keys such as
// "ETag" or "X-RateLimit-Limit" allocates a new string on every request.
const (
	hdrETag          = "Etag"
	hdrCacheControl  = "Cache-Control"
	hdrIfNoneMatch   = "If-None-Match"
	hdrContentType   = "Content-Type"
	hdrContentLength = "Content-Length"
)

// Header values every answer of a kind shares. net/http only reads header
// values, and each slice is full (len == cap), so an Add to one of them
// copies rather than writes into it.
var (
	jsonContentType       = []string{"application/json; charset=utf-8"}
	cacheMarketDataValues = []string{cacheMarketData}
	cacheStaticValues     = []string{cacheStatic}
)

// headerValue returns the shared value slice of the Cache-Control values
// used here, or a new one.
func headerValue(v string) []string {
	switch v {
	case cacheMarketData:
		return cacheMarketDataValues
	case cacheStatic:
		return cacheStaticValues
	}
	return []string{v}
}

const hexDigit = "0123456789abcdef"
