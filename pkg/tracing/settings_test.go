package tracing_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/tracing"
)

// TestSettingsLogValue: the configuration line of both services logs
// Settings, and it says whether tracing is on and with which exporter, and
// nothing of the OTLP endpoint or headers, which can carry credentials.
func TestSettingsLogValue(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, `"tracing":{"enabled":false,"exporter":"none"}`},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pw-secret@collector:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer hdr-secret"}, `"tracing":{"enabled":true,"exporter":"otlp"}`},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, `"tracing":{"enabled":false,"exporter":"none"}`},
	} {
		s := tracing.FromEnv(func(k string) string { return tc.env[k] })
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("starting", "tracing", s)
		line := buf.String()
		if !strings.Contains(line, tc.want) {
			t.Errorf("env %v: log line %s lacks %s", tc.env, line, tc.want)
		}
		if strings.Contains(line, "secret") {
			t.Errorf("log line quotes an OTLP credential: %s", line)
		}
	}
}
