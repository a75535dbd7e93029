package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// capturedHeaders is a header file as benchrun writes it.
const capturedHeaders = "Cache-Control: private, no-cache\nEtag: \"f499e873705e2610\"\nX-Ratelimit-Limit: 100000\nX-Request-Id: 01426f9be540b127d2ec70dc7c984884\n"

func newTestEngine(t testing.TB, body []byte) http.Handler {
	t.Helper()
	dir := t.TempDir()
	file, headers := filepath.Join(dir, "eod.json"), filepath.Join(dir, "eod.headers")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(headers, []byte(capturedHeaders), 0o644); err != nil {
		t.Fatal(err)
	}
	engine, err := newEngine(map[string]string{"/v1/eod": file}, map[string]string{"/v1/eod": headers}, "application/json; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

func TestEngineAnswersWithTheCapturedBytes(t *testing.T) {
	body := []byte(`{"pagination":{"limit":100,"offset":0,"count":0,"total":0},"data":[]}`)
	engine := newTestEngine(t, body)
	rec := httptest.NewRecorder()
	engine.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/eod?access_key=x&symbols=A,B&limit=100", nil))
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), body) {
		t.Fatalf("status %d body %q", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	for k, want := range map[string]string{"Cache-Control": "private, no-cache", "Etag": `"f499e873705e2610"`,
		"X-Ratelimit-Limit": "100000", "X-Request-Id": "01426f9be540b127d2ec70dc7c984884"} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q (captured)", k, got, want)
		}
	}
	rec = httptest.NewRecorder()
	engine.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/other", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("unknown route: status %d", rec.Code)
	}
}

func TestReadHeadersRefusesALineWithoutAColon(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.headers")
	if err := os.WriteFile(file, []byte("Etag \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readHeaders(file); err == nil {
		t.Fatal("readHeaders accepted a line without ': '")
	}
}

func TestRouteFlags(t *testing.T) {
	r := routeFlags{}
	if err := r.Set("/v1/eod=a.json"); err != nil || r["/v1/eod"] != "a.json" {
		t.Fatalf("Set: %v %v", err, r)
	}
	for _, bad := range []string{"v1/eod=a.json", "/v1/eod", "/v1/eod="} {
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

// BenchmarkCeilingHandler is the in-process cost of the ceiling: Gin's
// routing and writing a 20 KB captured answer, without the network. It is
// the floor under any cache-hit handler.
func BenchmarkCeilingHandler(b *testing.B) {
	engine := newTestEngine(b, bytes.Repeat([]byte("x"), 20<<10))
	req := httptest.NewRequest("GET", "/v1/eod?access_key=x&symbols=A,B&limit=100", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		engine.ServeHTTP(rec, req)
	}
}
