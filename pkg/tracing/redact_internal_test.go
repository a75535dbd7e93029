package tracing

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// otelgin records the URL path alone today; the copy it gets must still
// hold no credential, so that a version recording url.query or headers
// quotes none.
func TestRedactedCopyHoldsNoCredential(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/eod?access_key=k1secret&symbols=GOOG&q=words&token=k2secret", nil)
	r.Header.Set("Authorization", "Bearer k3secret")
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	cp := redacted(r, []string{"q"})
	for _, s := range []string{cp.URL.RawQuery, cp.URL.String(), cp.RequestURI, cp.Header.Get("Authorization")} {
		for _, secret := range []string{"k1secret", "k2secret", "k3secret", "words"} {
			if strings.Contains(s, secret) {
				t.Errorf("redacted copy quotes %q in %q", secret, s)
			}
		}
	}
	if !strings.Contains(cp.URL.RawQuery, "symbols=GOOG") || cp.Header.Get("Traceparent") == "" {
		t.Errorf("redacted copy lost what is not a credential: query %q, traceparent %q", cp.URL.RawQuery, cp.Header.Get("Traceparent"))
	}
	if r.URL.Query().Get("access_key") != "k1secret" || r.Header.Get("Authorization") != "Bearer k3secret" {
		t.Errorf("the original request was changed: %q, %q", r.URL.RawQuery, r.Header.Get("Authorization"))
	}
}
