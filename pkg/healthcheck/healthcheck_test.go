package healthcheck

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	if err := Check(context.Background(), ":"+port, io.Discard); err != nil {
		t.Fatalf("ready server: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := Check(context.Background(), ":"+port, io.Discard); err == nil {
		t.Fatal("unready server passed the health check")
	}
	srv.Close()
	if err := Check(context.Background(), ":"+port, io.Discard); err == nil {
		t.Fatal("stopped server passed the health check")
	}
}
