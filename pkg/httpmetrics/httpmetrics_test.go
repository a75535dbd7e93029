package httpmetrics

import (
	"net/http"
	"strings"
	"testing"
)

func TestMethod(t *testing.T) {
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"} {
		if got := Method(m); got != m {
			t.Errorf("Method(%q) = %q, want it kept", m, got)
		}
	}
	hostile := []string{"", "get", "Get", "PROPFIND", "BREW", "GET ", " GET", "GET\x00",
		strings.Repeat("A", 8<<10), "ПОЛУЧИТЬ", "G\u200bET", "M-SEARCH", "\xff\xfe"}
	for _, m := range hostile {
		if got := Method(m); got != Other {
			t.Errorf("Method(%.20q) = %.20q, want %q", m, got, Other)
		}
	}
}

func TestRoute(t *testing.T) {
	if got := Route(""); got != Unmatched {
		t.Errorf("Route(\"\") = %q, want %q", got, Unmatched)
	}
	if got := Route("/v1/notes/:id"); got != "/v1/notes/:id" {
		t.Errorf("Route kept no template: %q", got)
	}
}

func TestStatusIsAClosedSet(t *testing.T) {
	seen := map[string]bool{}
	for code := -1000; code <= 2000; code++ {
		seen[Status(code)] = true
	}
	// net/http knows 63 codes; add at most 9 classes and "invalid".
	if len(seen) > 63+9+1 {
		t.Errorf("Status produced %d distinct values over -1000..2000", len(seen))
	}
	for code, want := range map[int]string{200: "200", 201: "201", 418: "418", 299: "2xx", 599: "5xx", 0: "invalid", 1000: "invalid", -5: "invalid"} {
		if got := Status(code); got != want {
			t.Errorf("Status(%d) = %q, want %q", code, got, want)
		}
	}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			if got := Status(code); got != strings.TrimSpace(got) || len(got) != 3 {
				t.Errorf("Status(%d) = %q", code, got)
			}
		}
	}
}

func BenchmarkLabels(b *testing.B) {
	for b.Loop() {
		_ = Method("GET")
		_ = Status(200)
		_ = Route("/v1/eod")
	}
}
