// Package apidocs serves a service's interactive API reference at /docs:
// Swagger UI from the distribution embedded in github.com/swaggo/files/v2,
// started by a page and a script of our own that point it at the service's
// OpenAPI documents. Everything is compiled into the binary, so the page
// works offline, and it needs no key: the documents it reads are public.
package apidocs

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	swaggerfiles "github.com/swaggo/files/v2"
)

// ContentSecurityPolicy is sent with the page: scripts, styles and calls
// come only from the service itself (no inline script, no eval), so a
// document's text can never run as code in the page. Two exceptions, both
// Swagger UI's own: images may be data: URLs, which its stylesheet uses for
// icons, and one inline stylesheet is allowed by its hash, the colours of
// the top bar's logo (swagger-ui-standalone-preset.js; TestPolicyAllowsEveryInlineStyle
// fails when an upgrade changes it).
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; " +
	"style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Cache lifetimes. The page is revalidated on every visit so that a new
// release shows at once; assets change only with a release, and their
// ETag makes a revalidation after a day cheap.
const (
	pageCacheControl  = "no-cache"
	assetCacheControl = "public, max-age=86400"
)

// swaggerAssets are the files of the Swagger UI distribution the page
// loads. The distribution's own index.html and swagger-initializer.js
// (which point at the public Petstore) and its source maps are not served.
var swaggerAssets = []string{
	"swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
	"favicon-32x32.png", "favicon-16x16.png",
}

//go:embed static
var static embed.FS

// Document is one OpenAPI document the page offers.
type Document struct {
	// Name labels the document in the page's selector, such as "v1".
	Name string `json:"name"`
	// URL is where the service serves the document, such as
	// "/v1/openapi.json".
	URL string `json:"url"`
}

// Pages serves the reference page and its assets.
type Pages struct {
	// assets holds the page too, as index.html.
	assets map[string]asset
	// etags are computed on the first visit rather than by every server a
	// test starts: hashing the 2 MB of assets is the costly part.
	etags    func() map[string]string
	notFound gin.HandlerFunc
}

type asset struct {
	body        []byte
	contentType string
}

// New returns the pages of a service titled title, offering docs in that
// order (the first is shown first). notFound answers an unknown asset, in
// the service's own error format.
func New(title string, notFound gin.HandlerFunc, docs ...Document) (*Pages, error) {
	if len(docs) == 0 || notFound == nil {
		return nil, errors.New("api docs: a document and a not-found handler are required")
	}
	page, err := renderPage(title, docs)
	if err != nil {
		return nil, fmt.Errorf("api docs: %w", err)
	}
	assets, err := loadAssets()
	if err != nil {
		return nil, fmt.Errorf("api docs: %w", err)
	}
	assets["index.html"] = newAsset("index.html", page)
	p := &Pages{assets: assets, notFound: notFound}
	p.etags = sync.OnceValue(func() map[string]string {
		tags := make(map[string]string, len(assets))
		for name, a := range assets {
			sum := sha256.Sum256(a.body)
			tags[name] = `"` + hex.EncodeToString(sum[:12]) + `"`
		}
		return tags
	})
	return p, nil
}

func renderPage(title string, docs []Document) ([]byte, error) {
	tmpl, err := template.ParseFS(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("parse page: %w", err)
	}
	list, err := json.Marshal(docs)
	if err != nil {
		return nil, fmt.Errorf("documents: %w", err)
	}
	urls := make([]string, len(docs))
	for i, d := range docs {
		urls[i] = d.URL
	}
	data := struct {
		Title, Documents string
		URLs             []string
	}{title, string(list), urls}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render page: %w", err)
	}
	return b.Bytes(), nil
}

func loadAssets() (map[string]asset, error) {
	out := make(map[string]asset, len(swaggerAssets)+2)
	for _, name := range swaggerAssets {
		b, err := fs.ReadFile(swaggerfiles.FS, name)
		if err != nil {
			return nil, fmt.Errorf("asset: %w", err)
		}
		out[name] = newAsset(name, b)
	}
	own, err := fs.Glob(static, "static/apidocs.*")
	if err != nil {
		return nil, fmt.Errorf("asset: %w", err)
	}
	for _, p := range own {
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return nil, fmt.Errorf("asset: %w", err)
		}
		out[path.Base(p)] = newAsset(p, b)
	}
	return out, nil
}

func newAsset(name string, body []byte) asset {
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return asset{body: body, contentType: ct}
}

// Page answers GET /docs: the HTML page that starts Swagger UI.
func (p *Pages) Page(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	p.serve(c, "index.html", pageCacheControl)
}

// Asset answers GET /docs/*asset: a file of Swagger UI or of the page.
// Anything else is the service's 404, /docs/ too: like every path of the
// services, the page has one address and no redirect to it.
func (p *Pages) Asset(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("asset"), "/")
	if name == "index.html" || p.assets[name].body == nil {
		p.notFound(c)
		return
	}
	p.serve(c, name, assetCacheControl)
}

func (p *Pages) serve(c *gin.Context, name, cacheControl string) {
	a := p.assets[name]
	h := c.Writer.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", p.etags()[name])
	h.Set("X-Content-Type-Options", "nosniff")
	// ServeContent answers If-None-Match with 304, and ranges; a zero
	// modification time sends no Last-Modified, the ETag is the validator.
	http.ServeContent(c.Writer, c.Request, "", time.Time{}, bytes.NewReader(a.body))
}
