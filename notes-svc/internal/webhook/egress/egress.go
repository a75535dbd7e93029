// Package egress keeps webhook deliveries out of our own network. A URL
// is checked when an endpoint is saved (CheckURL) and every connection is
// checked again when it is made (Guard.Client), on the addresses the
// resolver gives then, so a name that resolves to a public address at
// registration and to a private one later (DNS rebinding) is still
// refused.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// MaxURLLen bounds a webhook URL.
const MaxURLLen = 2048

// Resolver looks host names up; *net.Resolver is one, and tests inject
// names that resolve to private addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which URLs and addresses webhooks may reach.
type Guard struct {
	// AllowPrivate admits plain http and loopback, private and CGNAT
	// addresses, for development and tests only. Link-local, metadata,
	// multicast and unspecified addresses stay refused.
	AllowPrivate bool
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
}

// Error is a refused URL or address, worded for the client.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func refuse(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// ErrRefused is in the chain of every refused connection.
var ErrRefused = errors.New("egress refused")

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	// Never reachable, or not meant to be: "this network", the IETF
	// protocol assignments, benchmarking, the reserved block and
	// documentation ranges.
	reserved = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("240.0.0.0/4"),
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("2001:db8::/32"),
		// NAT64 embeds an IPv4 address that could be a private one.
		netip.MustParsePrefix("64:ff9b::/96"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
	}
)

// CheckAddr refuses an address webhooks may not reach, saying why.
func (g *Guard) CheckAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case ip == metadataV4 || ip == metadataV6:
		return refuse("%s is a cloud metadata address", ip)
	case ip.IsUnspecified():
		return refuse("%s is the unspecified address", ip)
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return refuse("%s is a link-local address", ip)
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return refuse("%s is a multicast address", ip)
	case ip.Is4() && ip.As4() == [4]byte{255, 255, 255, 255}:
		return refuse("%s is the broadcast address", ip)
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return refuse("%s is in the reserved range %s", ip, p)
		}
	}
	if g.AllowPrivate {
		return nil
	}
	switch {
	case ip.IsLoopback():
		return refuse("%s is a loopback address", ip)
	case ip.IsPrivate():
		if ip.Is6() {
			return refuse("%s is a unique-local address", ip)
		}
		return refuse("%s is a private address", ip)
	case cgnat.Contains(ip):
		return refuse("%s is a shared (CGNAT) address", ip)
	}
	return nil
}

func (g *Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// resolve returns the addresses of host, an IP literal or a name, and
// refuses them all if any is refused: a name is as unsafe as its worst
// address, since the dialer may pick any.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := g.CheckAddr(ip); err != nil {
			return nil, err
		}
		return []netip.Addr{ip}, nil
	}
	ips, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, refuse("the host %q does not resolve", host)
	}
	for _, ip := range ips {
		if err := g.CheckAddr(ip); err != nil {
			return nil, refuse("the host %q resolves to %s", host, err.Error())
		}
	}
	return ips, nil
}

// CheckURL refuses a URL webhooks may not be sent to: not https (or http
// with AllowPrivate), over MaxURLLen, with userinfo, or whose host
// resolves to an address CheckAddr refuses.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	if raw == "" {
		return refuse("is required")
	}
	if len(raw) > MaxURLLen {
		return refuse("must be at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return refuse("must be an absolute https URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.AllowPrivate:
	default:
		return refuse("must use https")
	}
	if u.User != nil {
		return refuse("must not hold a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return refuse("must name a host")
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil {
			return refuse("has an invalid port")
		}
	}
	_, err = g.resolve(ctx, host)
	return err
}

// dial connects to addr only on addresses CheckAddr admits, both when
// the name is resolved and when the socket connects (Control), so no
// path around the check remains.
func (g *Guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	d := net.Dialer{Timeout: 5 * time.Second, Control: g.control}
	var last error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// control checks the address a socket is about to connect to.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := g.CheckAddr(ap.Addr()); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return nil
}

// Client returns an HTTP client for deliveries: every connection through
// the guard, no proxy from the environment, no redirect followed (the 3xx
// is the answer), each request bounded by timeout.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dial,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
