package apidocs_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
)

// newEngine mounts the pages the way the services do, with a not-found
// answer of its own so the tests can tell it from gin's.
func newEngine(t *testing.T, docs ...apidocs.Document) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	notFound := func(c *gin.Context) { c.String(http.StatusNotFound, "service 404") }
	p, err := apidocs.New("Example API <v1>", notFound, docs...)
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	e.GET("/docs", p.Page)
	e.GET("/docs/*asset", p.Asset)
	return e
}

func get(h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var (
	scriptTag = regexp.MustCompile(`<script([^>]*)>`)
	localRef  = regexp.MustCompile(`(?:src|href)="(/docs/[^"]+)"`)
)

func TestPage(t *testing.T) {
	e := newEngine(t, apidocs.Document{Name: "v1", URL: "/v1/openapi.json"}, apidocs.Document{Name: "v2", URL: "/v2/openapi.json"})
	rec := get(e, "/docs")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /docs: %d %s", rec.Code, rec.Body)
	}
	h := rec.Header()
	if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := h.Get("Content-Security-Policy"); csp != apidocs.ContentSecurityPolicy {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, directive := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(apidocs.ContentSecurityPolicy, directive+";") {
			t.Errorf("policy lacks %q: %s", directive, apidocs.ContentSecurityPolicy)
		}
	}
	if strings.Contains(apidocs.ContentSecurityPolicy, "unsafe") {
		t.Errorf("policy allows unsafe sources: %s", apidocs.ContentSecurityPolicy)
	}
	if cc := h.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control %q, want no-cache", cc)
	}
	body := rec.Body.String()
	// The documents reach the script as an attribute, HTML-escaped, and the
	// title is escaped too.
	if !strings.Contains(body, `data-documents="[{&#34;name&#34;:&#34;v1&#34;,&#34;url&#34;:&#34;/v1/openapi.json&#34;},{&#34;name&#34;:&#34;v2&#34;,&#34;url&#34;:&#34;/v2/openapi.json&#34;}]"`) {
		t.Errorf("page does not list both documents:\n%s", body)
	}
	if !strings.Contains(body, "<title>Example API &lt;v1&gt;</title>") {
		t.Errorf("title not escaped:\n%s", body)
	}
	// No inline script: every script tag loads a file.
	tags := scriptTag.FindAllStringSubmatch(body, -1)
	if len(tags) == 0 {
		t.Fatalf("no script tag:\n%s", body)
	}
	for _, tag := range tags {
		if !strings.Contains(tag[1], `src="/docs/`) {
			t.Errorf("inline script %q", tag[0])
		}
	}
	// Every file the page loads is served.
	refs := localRef.FindAllStringSubmatch(body, -1)
	if len(refs) < 5 {
		t.Fatalf("page references %d local files:\n%s", len(refs), body)
	}
	for _, ref := range refs {
		if rec := get(e, ref[1]); rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("GET %s (referenced by the page): %d, %d bytes", ref[1], rec.Code, rec.Body.Len())
		}
	}
}

// TestPolicyAllowsEveryInlineStyle finds the inline stylesheets Swagger UI
// renders (React's createElement("style", null, "...")) and checks that the
// policy allows each by its hash, and nothing else inline.
func TestPolicyAllowsEveryInlineStyle(t *testing.T) {
	e := newEngine(t, apidocs.Document{Name: "v1", URL: "/v1/openapi.json"})
	styleElem := regexp.MustCompile(`createElement\("style",null,"((?:[^"\\]|\\.)*)"\)`)
	var hashes []string
	for _, path := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui-standalone-preset.js"} {
		for _, m := range styleElem.FindAllStringSubmatch(get(e, path).Body.String(), -1) {
			css, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, m[1], err)
			}
			sum := sha256.Sum256([]byte(css))
			hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
			hashes = append(hashes, hash)
			if !strings.Contains(apidocs.ContentSecurityPolicy, hash) {
				t.Errorf("%s renders the inline style %q, which the policy does not allow (%s)", path, css, hash)
			}
		}
	}
	if len(hashes) == 0 {
		t.Fatal("no inline style found: the pattern no longer matches the bundle")
	}
	if n := strings.Count(apidocs.ContentSecurityPolicy, "'sha256-"); n != len(hashes) {
		t.Errorf("the policy allows %d hashes, Swagger UI renders %d inline styles %v", n, len(hashes), hashes)
	}
}

func TestAssets(t *testing.T) {
	e := newEngine(t, apidocs.Document{Name: "v1", URL: "/v1/openapi.json"})
	for path, wantType := range map[string]string{
		"/docs/swagger-ui-bundle.js":            "text/javascript; charset=utf-8",
		"/docs/swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
		"/docs/swagger-ui.css":                  "text/css; charset=utf-8",
		"/docs/favicon-32x32.png":               "image/png",
		"/docs/apidocs.js":                      "text/javascript; charset=utf-8",
		"/docs/apidocs.css":                     "text/css; charset=utf-8",
	} {
		rec := get(e, path)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", path, rec.Code)
			continue
		}
		h := rec.Header()
		if ct := h.Get("Content-Type"); ct != wantType {
			t.Errorf("GET %s: Content-Type %q, want %q", path, ct, wantType)
		}
		if cc := h.Get("Cache-Control"); cc != "public, max-age=86400" {
			t.Errorf("GET %s: Cache-Control %q", path, cc)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
		etag := h.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
			t.Fatalf("GET %s: ETag %q", path, etag)
		}
		if again := get(e, path, "If-None-Match", etag); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
			t.Errorf("GET %s with its ETag: %d, %d bytes; want 304 and no body", path, again.Code, again.Body.Len())
		}
		if other := get(e, path, "If-None-Match", `"stale"`); other.Code != http.StatusOK {
			t.Errorf("GET %s with a stale ETag: %d", path, other.Code)
		}
	}
	// The bundle is Swagger UI 5 (OpenAPI 3.1 support), not a placeholder.
	if rec := get(e, "/docs/swagger-ui-bundle.js"); rec.Body.Len() < 500_000 || !strings.Contains(rec.Body.String(), `PACKAGE_VERSION:"5.`) {
		t.Errorf("swagger-ui-bundle.js: %d bytes, no Swagger UI 5 version", rec.Body.Len())
	}
}

func TestUnknownAssets(t *testing.T) {
	e := newEngine(t, apidocs.Document{Name: "v1", URL: "/v1/openapi.json"})
	for _, path := range []string{
		"/docs/",                       // one address for the page
		"/docs/index.html",             // the page, or the distribution's Petstore page
		"/docs/swagger-initializer.js", // points at the public Petstore
		"/docs/swagger-ui-bundle.js.map",
		"/docs/nope.js",
		"/docs/static/apidocs.js",
		"/docs/../apidocs.go",
		"/docs/%2e%2e/apidocs.go",
	} {
		rec := get(e, path)
		if rec.Code != http.StatusNotFound || rec.Body.String() != "service 404" {
			t.Errorf("GET %s: %d %q, want the service's 404", path, rec.Code, rec.Body)
		}
	}
}

func TestNewNeedsDocumentAndNotFound(t *testing.T) {
	if _, err := apidocs.New("x", func(*gin.Context) {}); err == nil {
		t.Error("New without a document: no error")
	}
	if _, err := apidocs.New("x", nil, apidocs.Document{Name: "v1", URL: "/v1/openapi.json"}); err == nil {
		t.Error("New without a not-found handler: no error")
	}
}
