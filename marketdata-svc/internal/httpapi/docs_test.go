package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// newDocsServer returns a server on a fake store and a key whose monthly
// quota allows a single API call.
func newDocsServer(t *testing.T) (*httpapi.Server, string) {
	t.Helper()
	store := newFakeStore(func(marketdata.EODQuery) (marketdata.EODPage, error) {
		return marketdata.EODPage{Bars: []marketdata.Bar{{Symbol: "GOOG", Date: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC), Close: 362.71, SplitFactor: 1}}, Total: 1}, nil
	})
	key := newKey(t, store, auth.Principal{KeyID: "k1", Scopes: []string{"eod"}, MonthlyQuota: 1})
	srv, _ := newServer(t, store)
	return srv, key
}

// serve sends a GET through h; unlike apiDoc.do it does not check the
// answer, as the docs pages are no part of the API document.
func serve(h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newGet(target, header...))
	return rec
}

func TestDocsPageNeedsNoKey(t *testing.T) {
	srv, _ := newDocsServer(t)
	rec := serve(srv, "/docs")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /docs without a key: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if rec.Header().Get("Content-Security-Policy") == "" {
		t.Error("no Content-Security-Policy")
	}
	// Both versions are offered, v1 first (marketstack's).
	body := rec.Body.String()
	v1, v2 := strings.Index(body, "/v1/openapi.json"), strings.Index(body, "/v2/openapi.json")
	if v1 < 0 || v2 < 0 || v1 > v2 {
		t.Errorf("page does not offer /v1 then /v2 documents:\n%s", body)
	}
	for _, doc := range []string{"/v1/openapi.json", "/v2/openapi.json"} {
		if rec := serve(srv, doc); rec.Code != http.StatusOK {
			t.Errorf("GET %s without a key: %d", doc, rec.Code)
		}
	}
}

func TestDocsAssets(t *testing.T) {
	srv, _ := newDocsServer(t)
	for _, path := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui-standalone-preset.js", "/docs/swagger-ui.css", "/docs/apidocs.js"} {
		rec := serve(srv, path)
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("GET %s: %d, %d bytes", path, rec.Code, rec.Body.Len())
			continue
		}
		if rec.Header().Get("Cache-Control") == "" || rec.Header().Get("ETag") == "" {
			t.Errorf("GET %s: Cache-Control %q, ETag %q", path, rec.Header().Get("Cache-Control"), rec.Header().Get("ETag"))
		}
	}
}

func TestDocsUnknownAssetIsMarketstack404(t *testing.T) {
	srv, _ := newDocsServer(t)
	doc := loadDoc(t)
	for _, path := range []string{"/docs/nope.js", "/docs/", "/docs/index.html"} {
		// doc.do validates an undocumented path's answer against the
		// document's Error schema.
		rec := doc.do(t, srv, path)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
			continue
		}
		if !strings.Contains(rec.Body.String(), `"code":"invalid_api_function"`) {
			t.Errorf("GET %s: %s, want marketstack's invalid_api_function", path, rec.Body)
		}
	}
}

// TestDocsAreNotAPICalls reads the page and its assets with a key whose
// quota allows one call, in both places a key may be sent; the one call is
// still there afterwards, and the second is refused, so the quota is real.
func TestDocsAreNotAPICalls(t *testing.T) {
	srv, key := newDocsServer(t)
	for range 3 {
		for _, path := range []string{"/docs", "/docs/apidocs.js", "/v1/openapi.json"} {
			if rec := serve(srv, path+"?access_key="+key); rec.Code != http.StatusOK {
				t.Fatalf("GET %s with a key: %d", path, rec.Code)
			}
			if rec := serve(srv, path, "Authorization", "Bearer "+key); rec.Code != http.StatusOK {
				t.Fatalf("GET %s with a bearer key: %d", path, rec.Code)
			}
		}
	}
	if rec := serve(srv, "/v1/eod?symbols=GOOG&access_key="+key); rec.Code != http.StatusOK {
		t.Fatalf("the quota's one call after reading the docs: %d %s", rec.Code, rec.Body)
	}
	if rec := serve(srv, "/v1/eod?symbols=GOOG&access_key="+key); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a second call on a quota of one: %d, want 429", rec.Code)
	}
}
