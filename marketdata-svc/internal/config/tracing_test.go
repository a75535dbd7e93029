package config

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The config log line says whether tracing is on and with which exporter,
// and nothing of the OTLP endpoint or headers, which can carry credentials.
func TestTracingLogged(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MARKETDATA_DATABASE_URL": "postgres://u:p@db/marketdata"}, `"tracing":{"enabled":false,"exporter":"none"}`},
		{map[string]string{"MARKETDATA_DATABASE_URL": "postgres://u:p@db/marketdata", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pw-secret@collector:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer hdr-secret"}, `"tracing":{"enabled":true,"exporter":"otlp"}`},
		{map[string]string{"MARKETDATA_DATABASE_URL": "postgres://u:p@db/marketdata", "OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, `"tracing":{"enabled":false,"exporter":"none"}`},
	} {
		c, err := Load(env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("starting", "config", c)
		line := buf.String()
		if !strings.Contains(line, tc.want) {
			t.Errorf("env %v: config line %s lacks %s", tc.env, line, tc.want)
		}
		if strings.Contains(line, "secret") {
			t.Errorf("config line quotes an OTLP credential: %s", line)
		}
	}
}
