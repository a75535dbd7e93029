package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestNoteAnswersCarryContentLength reads notes over a real HTTP server:
// whether the body is short enough for net/http to measure it or long
// enough that the handler must, the answer has a Content-Length that
// matches its body and is never chunked.
func TestNoteAnswersCarryContentLength(t *testing.T) {
	h := newHarness(t)
	ts := httptest.NewServer(h.srv)
	t.Cleanup(ts.Close)
	// A note of 1,800 to 1,900 content bytes answers with about 2 KiB:
	// every body size around net/http's buffer.
	sizes := []int{10, 60 << 10}
	for n := 1800; n <= 1900; n++ {
		sizes = append(sizes, n)
	}
	for _, size := range sizes {
		body := `{"title":"length","content":"` + strings.Repeat("a", size) + `"}`
		req, _ := http.NewRequest("POST", ts.URL+"/v1/notes", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+h.alice)
		req.Header.Set("Content-Type", "application/json")
		created := send(t, req, http.StatusCreated)
		id := created.Header.Get("Location")[len("/v1/notes/"):]
		req, _ = http.NewRequest("GET", ts.URL+"/v1/notes/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+h.alice)
		send(t, req, http.StatusOK)
	}
}

// send sends req and checks its status, its declared length against the
// body, and that the body was not chunked.
func send(t *testing.T, req *http.Request, status int) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	declared := resp.Header.Get("Content-Length")
	if resp.StatusCode != status || len(resp.TransferEncoding) > 0 || declared != strconv.Itoa(len(b)) || resp.ContentLength != int64(len(b)) {
		t.Fatalf("%s %s: status %d (want %d), transfer encoding %v, Content-Length %q for %d bytes",
			req.Method, req.URL.Path, resp.StatusCode, status, resp.TransferEncoding, declared, len(b))
	}
	return resp
}
