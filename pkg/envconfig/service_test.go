package envconfig

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestServiceDefaults(t *testing.T) {
	r := reader(nil)
	s := r.Service(":8000")
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if s.HTTPAddr != ":8000" || s.TrustedProxies != nil || s.RequestTimeout != 10*time.Second || s.LogLevel != slog.LevelInfo ||
		s.ShutdownDrain != 5*time.Second || s.ShutdownTimeout != 20*time.Second || s.KeyCacheTTL != 30*time.Second ||
		s.AuthFailureLimit != 20 || s.AuthFailureWindow != time.Minute || s.PprofAddr != "" || s.Tracing.Enabled() {
		t.Errorf("defaults = %+v", s)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", slog.GroupValue(s.LogAttrs()...))
	if !strings.Contains(b.String(), `"tracing":{"enabled":false,"exporter":"none"}`) {
		t.Errorf("log line lacks tracing switched off: %s", b.String())
	}
}

// TestServiceChecks: every bad shared setting is reported under the
// service's own prefix, with the other variable it depends on named too.
func TestServiceChecks(t *testing.T) {
	r := reader(map[string]string{
		"APP_HTTP_ADDR": ":9000", "APP_PPROF_ADDR": ":9000", "APP_TRUSTED_PROXIES": "10.0.0.0/8, nope",
		"APP_REQUEST_TIMEOUT": "0s", "APP_SHUTDOWN_TIMEOUT": "0s", "APP_KEY_CACHE_TTL": "2m", "APP_AUTH_FAILURE_LIMIT": "0",
	})
	r.Service(":8000")
	err := r.Err()
	if err == nil {
		t.Fatal("bad shared settings accepted")
	}
	for _, want := range []string{
		"APP_PPROF_ADDR must differ from APP_HTTP_ADDR", `APP_TRUSTED_PROXIES "nope" is neither`,
		"APP_REQUEST_TIMEOUT must be between 100ms and 10m0s (got 0s)", "APP_SHUTDOWN_TIMEOUT must be between 1s and 10m0s", "APP_KEY_CACHE_TTL",
		"APP_AUTH_FAILURE_LIMIT must be between 1 and 1000000 (got 0)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "10.0.0.0/8") {
		t.Errorf("a good CIDR was reported: %v", err)
	}
}

// TestServiceLogAttrs: the log line says whether tracing is on and with
// which exporter (tracing.Settings.LogValue), and nothing of the OTLP
// endpoint or headers, which can carry credentials.
func TestServiceLogAttrs(t *testing.T) {
	r := reader(map[string]string{"APP_PPROF_ADDR": "127.0.0.1:6060", "OTEL_TRACES_EXPORTER": "otlp",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pw-secret@collector:4318", "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer hdr-secret"})
	s := r.Service(":8000")
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", slog.GroupValue(s.LogAttrs()...))
	for _, want := range []string{`"http_addr":":8000"`, `"pprof_addr":"127.0.0.1:6060"`, `"shutdown_drain":"5s"`,
		`"tracing":{"enabled":true,"exporter":"otlp"}`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("log line lacks %s: %s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "secret") {
		t.Errorf("log line quotes an OTLP header: %s", b.String())
	}
}

// TestServiceKeyCacheTTL is an outside audit's finding, for both services, which
// read the setting here: an explicit 0 is kept (no key cache), not taken
// for the 30 s default, and the range is auth.CheckCacheTTLSetting's
// (tested there).
func TestServiceKeyCacheTTL(t *testing.T) {
	read := func(value string) (Service, error) {
		r := reader(map[string]string{"APP_KEY_CACHE_TTL": value})
		s := r.Service(":8000")
		return s, r.Err()
	}
	if s, err := read("0"); err != nil || s.KeyCacheTTL != 0 {
		t.Errorf("0 (no key cache): %v, %v", s.KeyCacheTTL, err)
	}
	if _, err := read("61s"); err == nil || !strings.Contains(err.Error(), "APP_KEY_CACHE_TTL") {
		t.Errorf("61s accepted (%v)", err)
	}
}
