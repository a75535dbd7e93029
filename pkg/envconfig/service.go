package envconfig

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// Service is the part of the configuration both services read, check and
// log alike: where and how long they serve, how they log, how their API-key
// checks are bounded and what the OTEL_* variables say. Each service's
// Config embeds it, so the same variable means the same in both.
type Service struct {
	HTTPAddr string
	// TrustedProxies are the CIDRs or IPs whose X-Forwarded-For is
	// believed; none by default, so a client cannot spoof its address.
	TrustedProxies []string
	// RequestTimeout bounds the handling of one API request.
	RequestTimeout time.Duration
	LogLevel       slog.Level
	// ShutdownDrain is how long readiness reports failure before the
	// server stops accepting, so load balancers stop routing first;
	// ShutdownTimeout is how long in-flight requests then get to finish.
	ShutdownDrain   time.Duration
	ShutdownTimeout time.Duration
	// KeyCacheTTL bounds how long a revoked key may still be accepted.
	KeyCacheTTL time.Duration
	// AuthFailureLimit invalid keys from one client address within
	// AuthFailureWindow block that address until the window ends.
	AuthFailureLimit  int
	AuthFailureWindow time.Duration
	// PprofAddr serves net/http/pprof when set; it must not be the API
	// address.
	PprofAddr string
	// AdminAddr serves the admin API (pkg/adminapi) when set; off by
	// default. AdminTokenFile holds its tokens, one name:token a line,
	// and is required with it. AuditRetention is how long the audit trail
	// of keys keeps a row.
	AdminAddr      string
	AdminTokenFile string
	AuditRetention time.Duration
	// Tracing is what the standard OTEL_* variables say: off unless
	// OTEL_TRACES_EXPORTER names an exporter (pkg/tracing).
	Tracing tracing.Settings

	// logged are the settings the Reader read, these and the service's
	// own, read before or after them (Reader.Logged).
	logged *[]slog.Attr
}

// Service reads and checks the shared settings; defaultHTTPAddr is where
// the service listens unless HTTP_ADDR says otherwise.
func (r *Reader) Service(defaultHTTPAddr string) Service {
	s := Service{
		HTTPAddr:          r.String("HTTP_ADDR", defaultHTTPAddr),
		TrustedProxies:    r.List("TRUSTED_PROXIES"),
		RequestTimeout:    r.DurationIn("REQUEST_TIMEOUT", 10*time.Second, 100*time.Millisecond, 10*time.Minute),
		LogLevel:          r.Level("LOG_LEVEL", slog.LevelInfo),
		ShutdownDrain:     r.DurationOrOff("SHUTDOWN_DRAIN", 5*time.Second, 100*time.Millisecond, 5*time.Minute),
		ShutdownTimeout:   r.DurationIn("SHUTDOWN_TIMEOUT", 20*time.Second, time.Second, 10*time.Minute),
		KeyCacheTTL:       r.DurationOrOff("KEY_CACHE_TTL", 30*time.Second, time.Second, auth.MaxCacheTTL),
		AuthFailureLimit:  r.IntIn("AUTH_FAILURE_LIMIT", 20, 1, 1_000_000),
		AuthFailureWindow: r.DurationIn("AUTH_FAILURE_WINDOW", time.Minute, time.Second, 24*time.Hour),
		PprofAddr:         r.String("PPROF_ADDR", ""),
		AdminAddr:         r.String("ADMIN_ADDR", ""),
		AdminTokenFile:    r.String("ADMIN_TOKEN_FILE", ""),
		AuditRetention:    r.DurationIn("AUDIT_RETENTION", 400*24*time.Hour, 7*24*time.Hour, 10*365*24*time.Hour),
		Tracing:           tracing.FromEnv(r.getenv),
		logged:            r.logged,
	}
	// A malformed proxy would otherwise fail only when the server starts,
	// after the configuration was reported good.
	for _, p := range s.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				r.Fail("TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP nor a CIDR", p))
			}
		}
	}
	if s.PprofAddr != "" && s.PprofAddr == s.HTTPAddr {
		r.Fail("PPROF_ADDR", "must differ from "+r.prefix+"HTTP_ADDR: profiles are never served on the public port")
	}
	if s.AdminAddr != "" && (s.AdminAddr == s.HTTPAddr || s.AdminAddr == s.PprofAddr) {
		r.Fail("ADMIN_ADDR", "must differ from "+r.prefix+"HTTP_ADDR and "+r.prefix+"PPROF_ADDR: the admin API is never served on another listener")
	}
	if s.AdminAddr != "" && s.AdminTokenFile == "" {
		r.Fail("ADMIN_TOKEN_FILE", "is required with "+r.prefix+"ADMIN_ADDR: the file of the admin tokens, one name:token a line")
	}
	return s
}

// LogAttrs are the service's whole configuration for its log line: every
// setting the Reader that returned s read, the service's own included,
// as Reader.Logged words them (secrets masked), then the tracing settings
// (which log no endpoint or header).
func (s Service) LogAttrs() []slog.Attr {
	var out []slog.Attr
	if s.logged != nil {
		out = append(out, *s.logged...)
	}
	return append(out, slog.Any("tracing", s.Tracing))
}

// LogValue logs LogAttrs as a group, so that a service's Config, which
// embeds its Service, logs whole and masked when it is logged once at
// start-up.
func (s Service) LogValue() slog.Value { return slog.GroupValue(s.LogAttrs()...) }
