package httpedge

import (
	"net"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
)

// ClientIP returns what gin's Context.ClientIP answers on an engine made
// by NewEngine(trustedProxies), for the access log.
//
// With proxies to trust, that is gin's own answer, forwarding headers and
// all. With none (the default) no header counts and the answer is the
// connection's peer address, which this reads from RemoteAddr directly:
// gin's route there looks the listener up through the whole context chain
// and parses the address into a net.IP, which cost 2.5% of an in-memory
// EOD hit's CPU (BenchmarkClientIP has the figures). gin trusts the peer
// of a unix socket whatever the setting; the services listen on TCP only
// (pkg/httpserve), so the two answers agree, and FuzzClientIP holds them
// to it.
func ClientIP(trustedProxies []string) func(*gin.Context) string {
	if len(trustedProxies) > 0 {
		return (*gin.Context).ClientIP
	}
	return peerIP
}

// peerIP is the host part of the request's RemoteAddr when it is an IP
// address net.ParseIP accepts, spelled as net.IP spells it, else "" (gin's
// rule).
func peerIP(c *gin.Context) string {
	host, _, err := net.SplitHostPort(strings.TrimSpace(c.Request.RemoteAddr))
	if err != nil {
		return ""
	}
	// netip parses without allocating; unlike net.ParseIP it accepts an
	// IPv6 zone, which gin's answer never carries.
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return ""
	}
	// gin answers with net.IP's String: IPv4 as parsed (netip has already
	// refused leading zeros, so there is one spelling), IPv6 in RFC 5952's
	// form and an IPv4-mapped IPv6 address as its IPv4.
	if a.Is4() {
		return host
	}
	return a.Unmap().String()
}
