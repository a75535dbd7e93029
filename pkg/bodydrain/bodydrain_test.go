package bodydrain

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sendThenRead sends a request with a size-byte body in full before reading
// the answer, as many clients do, over a fresh connection.
func sendThenRead(t *testing.T, addr string, size int) (int, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size); err != nil {
		return 0, err
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for sent := 0; sent < size; sent += len(chunk) {
		if _, err := conn.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
			return 0, fmt.Errorf("write: %w", err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return resp.StatusCode, err
}

// TestEarlyAnswerSurvivesABodyInFlight: a handler that answers 413 without
// reading a 16 MiB body loses its answer to a reset about half the time on
// loopback without Drain, and never with it.
func TestEarlyAnswerSurvivesABodyInFlight(t *testing.T) {
	refuse := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"status":413}`)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := Track(r)
		refuse(w, r)
		b.Drain(w)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for i := range 20 {
		status, err := sendThenRead(t, addr, 16<<20)
		if err != nil || status != http.StatusRequestEntityTooLarge {
			t.Fatalf("exchange %d: %d, %v; want a readable 413", i+1, status, err)
		}
	}
}

func TestReadBodyIsNotDrained(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("abc"))
	b := Track(r)
	if _, err := io.ReadAll(r.Body); err != nil {
		t.Fatal(err)
	}
	if !b.eof {
		t.Fatal("a body read to the end is not marked read")
	}
	if Track(httptest.NewRequest(http.MethodGet, "/", nil)) != nil {
		t.Fatal("a request without a body is tracked")
	}
	var none *Body
	none.Drain(httptest.NewRecorder()) // no body: nothing to do, no panic
}
