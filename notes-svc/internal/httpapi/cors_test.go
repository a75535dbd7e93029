package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestNoCORSOnAnyRoute walks every route of the router: notes-svc has no
// browser policy, so no answer, to a request or to a preflight, carries a
// CORS header that would let another origin's script read it.
func TestNoCORSOnAnyRoute(t *testing.T) {
	h := newHarness(t)
	param := regexp.MustCompile(`[:*][a-z]+`)
	routes := h.srv.Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d routes listed", len(routes))
	}
	for _, r := range routes {
		path := param.ReplaceAllString(r.Path, "x")
		for _, method := range []string{r.Method, http.MethodOptions} {
			req := httptest.NewRequest(method, path, nil)
			req.Header.Set("Origin", "https://elsewhere.example.com")
			req.Header.Set("Access-Control-Request-Method", r.Method)
			req.Header.Set("Authorization", "Bearer "+h.alice)
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, req)
			for name := range rec.Header() {
				if strings.HasPrefix(name, "Access-Control-") {
					t.Errorf("%s %s: %d with %s", method, r.Path, rec.Code, name)
				}
			}
		}
	}
}
