package egress_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
)

// names resolves a fixed table; other names do not resolve.
type names map[string][]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range n[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

var table = names{
	"public.example":   {"93.184.215.14"},
	"mixed.example":    {"93.184.215.14", "10.1.2.3"},
	"private.example":  {"192.168.1.10"},
	"internal.example": {"fd12:3456::1"},
	"cgnat.example":    {"100.100.1.1"},
	"meta.example":     {"169.254.169.254"},
	"meta6.example":    {"fd00:ec2::254"},
	"mapped.example":   {"::ffff:127.0.0.1"},
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	strict := &egress.Guard{Resolver: table}
	dev := &egress.Guard{Resolver: table, AllowPrivate: true}
	for _, tc := range []struct {
		url         string
		strict, dev string // "" accepted, else a word of the refusal
	}{
		{"https://public.example/hook", "", ""},
		{"https://public.example:8443/hook?x=1", "", ""},
		{"http://public.example/hook", "https", ""},
		{"ftp://public.example/hook", "https", "https"},
		{"https://user:pw@public.example/hook", "user name", "user name"},
		{"https://", "host", "host"},
		{"/relative", "absolute", "absolute"},
		{"https://public.example/" + strings.Repeat("a", 2048), "2048", "2048"},
		{"https://nowhere.example/", "does not resolve", "does not resolve"},
		{"https://127.0.0.1/", "loopback", ""},
		{"https://[::1]/", "loopback", ""},
		{"https://10.0.0.1/", "private", ""},
		{"https://172.16.5.4/", "private", ""},
		{"https://192.168.0.1/", "private", ""},
		{"https://100.64.0.1/", "CGNAT", ""},
		{"https://[fc00::1]/", "unique-local", ""},
		{"https://0.0.0.0/", "unspecified", "unspecified"},
		{"https://[::]/", "unspecified", "unspecified"},
		{"https://169.254.169.254/latest/meta-data", "metadata", "metadata"},
		{"https://[fd00:ec2::254]/", "metadata", "metadata"},
		{"https://169.254.10.10/", "link-local", "link-local"},
		{"https://[fe80::1]/", "link-local", "link-local"},
		{"https://239.1.2.3/", "multicast", "multicast"},
		{"https://[ff02::1]/", "link-local", "link-local"},
		{"https://[::ffff:10.0.0.1]/", "private", ""},
		{"https://private.example/", "private", ""},
		{"https://internal.example/", "unique-local", ""},
		{"https://cgnat.example/", "CGNAT", ""},
		{"https://mixed.example/", "private", ""},
		{"https://meta.example/", "metadata", "metadata"},
		{"https://meta6.example/", "metadata", "metadata"},
		{"https://mapped.example/", "loopback", ""},
	} {
		for _, g := range []struct {
			guard *egress.Guard
			want  string
		}{{strict, tc.strict}, {dev, tc.dev}} {
			err := g.guard.CheckURL(ctx, tc.url)
			switch {
			case g.want == "" && err != nil:
				t.Errorf("CheckURL(%.60q, allow private %v) = %v, want accepted", tc.url, g.guard.AllowPrivate, err)
			case g.want != "" && (err == nil || !strings.Contains(err.Error(), g.want)):
				t.Errorf("CheckURL(%.60q, allow private %v) = %v, want a refusal saying %q", tc.url, g.guard.AllowPrivate, err, g.want)
			}
			var e *egress.Error
			if err != nil && !errors.As(err, &e) {
				t.Errorf("CheckURL(%.60q) error %T is not an *egress.Error", tc.url, err)
			}
		}
	}
}

// localhost is a real name: the system resolver gives loopback, which only
// the development setting admits.
func TestLocalhostIsLoopback(t *testing.T) {
	ctx := context.Background()
	if err := (&egress.Guard{}).CheckURL(ctx, "https://localhost/hook"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("localhost accepted or refused for another reason: %v", err)
	}
	if err := (&egress.Guard{AllowPrivate: true}).CheckURL(ctx, "http://localhost:8080/hook"); err != nil {
		t.Errorf("localhost refused with AllowPrivate: %v", err)
	}
}

// rebinding answers a public address the first time and loopback after,
// as a hostile DNS server would between registration and delivery.
type rebinding struct{ calls atomic.Int32 }

func (r *rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func TestConnectTimeCheck(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]

	g := &egress.Guard{Resolver: &rebinding{}}
	url := "https://rebind.example" + port + "/"
	if err := g.CheckURL(context.Background(), url); err != nil {
		t.Fatalf("first resolution refused: %v", err)
	}
	_, err := g.Client(5 * time.Second).Get("http://rebind.example" + port + "/")
	if !errors.Is(err, egress.ErrRefused) {
		t.Errorf("connection after rebinding to loopback: %v, want ErrRefused", err)
	}
	// A literal address skips resolution and is checked at connect time.
	if _, err := (&egress.Guard{}).Client(5 * time.Second).Get(srv.URL); !errors.Is(err, egress.ErrRefused) {
		t.Errorf("connection to %s: %v, want ErrRefused", srv.URL, err)
	}
	// Metadata stays refused with AllowPrivate; nothing listens there, so
	// only the guard can answer at once.
	if _, err := (&egress.Guard{AllowPrivate: true}).Client(5 * time.Second).Get("http://169.254.169.254/latest"); !errors.Is(err, egress.ErrRefused) {
		t.Errorf("metadata with AllowPrivate: %v, want ErrRefused", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the server was reached %d times", hits.Load())
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	}))
	defer srv.Close()
	resp, err := (&egress.Guard{AllowPrivate: true}).Client(5*time.Second).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || followed.Load() {
		t.Errorf("status %d, followed %v: want the 302 itself", resp.StatusCode, followed.Load())
	}
}
