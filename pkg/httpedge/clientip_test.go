package httpedge

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// clientIPs answers a request from remoteAddr, with X-Forwarded-For when
// xff is not empty, through ClientIP(trusted) and through gin's own
// ClientIP on an engine made by NewEngine(trusted).
func clientIPs(t testing.TB, trusted []string, remoteAddr, xff string) (ours, gins string) {
	t.Helper()
	e, err := NewEngine(trusted)
	if err != nil {
		t.Fatal(err)
	}
	return clientIPsOn(e, trusted, remoteAddr, xff)
}

// clientIPsOn is clientIPs on an engine made by NewEngine(trusted).
func clientIPsOn(e *gin.Engine, trusted []string, remoteAddr, xff string) (ours, gins string) {
	c := gin.CreateTestContextOnly(httptest.NewRecorder(), e)
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	c.Request.RemoteAddr = remoteAddr
	if xff != "" {
		c.Request.Header.Set("X-Forwarded-For", xff)
	}
	return ClientIP(trusted)(c), c.ClientIP()
}

// TestClientIP: with no trusted proxy the answer is the peer's address and
// no forwarding header moves it; with one, the header of a trusted peer
// counts. Either way it is gin's answer.
func TestClientIP(t *testing.T) {
	for _, tc := range []struct {
		trusted         []string
		remoteAddr, xff string
		want            string
	}{
		{nil, "192.0.2.7:5123", "", "192.0.2.7"},
		{nil, "192.0.2.7:5123", "198.51.100.1", "192.0.2.7"},
		{nil, "[2001:db8::1]:443", "", "2001:db8::1"},
		{nil, " 192.0.2.7:1 ", "", "192.0.2.7"},
		{nil, "[fe80::1%eth0]:443", "", ""},
		{nil, "192.0.2.7", "", ""},
		{nil, "example.com:80", "", ""},
		{nil, "", "", ""},
		{[]string{"10.0.0.0/8"}, "10.1.2.3:80", "198.51.100.1", "198.51.100.1"},
		{[]string{"10.0.0.0/8"}, "192.0.2.7:80", "198.51.100.1", "192.0.2.7"},
	} {
		ours, gins := clientIPs(t, tc.trusted, tc.remoteAddr, tc.xff)
		if ours != tc.want || gins != tc.want {
			t.Errorf("trusted %v, RemoteAddr %q, X-Forwarded-For %q: ClientIP %q, gin %q, want %q",
				tc.trusted, tc.remoteAddr, tc.xff, ours, gins, tc.want)
		}
	}
}

// FuzzClientIP holds the fast path to gin's answer for any peer address
// and forwarding header, with no proxy trusted.
func FuzzClientIP(f *testing.F) {
	for _, s := range []string{"192.0.2.7:5123", "[2001:db8::1]:443", "[fe80::1%eth0]:1", "[::ffff:192.0.2.7]:9",
		"1.2.3.4%x:1", "01.2.3.4:1", " \t1.2.3.4:1\n", "\u00a01.2.3.4:1", "[1:2:3:4:5:6:7:8]:0", ":80", "[]:1"} {
		f.Add(s, "198.51.100.1")
	}
	e, err := NewEngine(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, remoteAddr, xff string) {
		if ours, gins := clientIPsOn(e, nil, remoteAddr, xff); ours != gins {
			t.Errorf("RemoteAddr %q: ClientIP %q, gin %q", remoteAddr, ours, gins)
		}
	})
}

func BenchmarkClientIP(b *testing.B) {
	e, err := NewEngine(nil)
	if err != nil {
		b.Fatal(err)
	}
	// The context chain of a request as the service sees it: net/http's
	// server and listener values and its cancelation, then the request
	// deadline and the principal.
	ctx := context.WithValue(context.Background(), http.ServerContextKey, &http.Server{})
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ctx = context.WithValue(ctx, struct{ principal int }{}, "acct")
	c := gin.CreateTestContextOnly(httptest.NewRecorder(), e)
	c.Request = httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	c.Request.RemoteAddr = "192.0.2.7:5123"
	for _, bc := range []struct {
		name string
		f    func(*gin.Context) string
	}{{"gin", (*gin.Context).ClientIP}, {"peer", ClientIP(nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if bc.f(c) == "" {
					b.Fatal("no address")
				}
			}
		})
	}
}
