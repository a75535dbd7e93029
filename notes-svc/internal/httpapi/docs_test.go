package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/httpapi"
)

// get sends a request with no key at all, as a browser opening the page.
func (h harness) get(path string) (*http.Response, string) {
	h.t.Helper()
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	resp := w.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestDocsPageNeedsNoKey(t *testing.T) {
	h := newHarness(t)
	resp, body := h.get("/docs")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /docs without a key: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Error("no Content-Security-Policy")
	}
	if !strings.Contains(body, "/v1/openapi.json") || !strings.Contains(body, `src="/docs/swagger-ui-bundle.js"`) {
		t.Errorf("page does not start Swagger UI on /v1/openapi.json:\n%s", body)
	}
	// The document the page reads is public too.
	if resp, _ := h.get("/v1/openapi.json"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/openapi.json without a key: %d", resp.StatusCode)
	}
}

func TestDocsAssets(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/docs/apidocs.js"} {
		resp, body := h.get(path)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %d, %d bytes", path, resp.StatusCode, len(body))
			continue
		}
		if resp.Header.Get("Cache-Control") == "" || resp.Header.Get("ETag") == "" {
			t.Errorf("GET %s: Cache-Control %q, ETag %q", path, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
		}
	}
}

func TestDocsUnknownAssetIsProblem404(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/docs/nope.js", "/docs/", "/docs/index.html"} {
		resp, body := h.get(path)
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: %d %q, want a 404 problem", path, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		var p struct {
			Status   int
			Instance string
		}
		if err := json.Unmarshal([]byte(body), &p); err != nil || p.Status != http.StatusNotFound || p.Instance != path {
			t.Errorf("GET %s: problem %s (%v)", path, body, err)
		}
	}
	// Another method on the page is the service's 405, like on any route.
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/docs", nil))
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("POST /docs: %d %q, want a 405 problem", w.Code, w.Header().Get("Content-Type"))
	}
}

// TestOpenAPIHasNoDuplicateKeys guards what Swagger UI's parser rejects:
// the aliases' merged operations once carried two operationIds each.
func TestOpenAPIHasNoDuplicateKeys(t *testing.T) {
	doc, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var walk func(dec *json.Decoder, at string)
	walk = func(dec *json.Decoder, at string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, _ := dec.Token()
				k := kt.(string)
				if seen[k] {
					t.Errorf("%s: key %q twice", at, k)
				}
				seen[k] = true
				walk(dec, at+"/"+k)
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				walk(dec, at+"/"+strconv.Itoa(i))
			}
			_, _ = dec.Token()
		}
	}
	walk(json.NewDecoder(bytes.NewReader(doc)), "")
	// The aliases keep their own ids and the merged rest.
	type operation struct {
		OperationID string
		Deprecated  bool
		Responses   map[string]any
	}
	var d struct {
		Paths map[string]struct{ Post operation }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	alias := d.Paths["/notes"].Post
	if alias.OperationID != "createNoteUnversioned" || !alias.Deprecated || len(alias.Responses) == 0 {
		t.Errorf("POST /notes: %+v", alias)
	}
	if id := d.Paths["/v1/notes"].Post.OperationID; id != "createNote" {
		t.Errorf("POST /v1/notes operationId %q", id)
	}
}
