package main

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

// TestSyncCommand runs sync through run as the CronJob does: the token
// and base URL from MARKETDATA_SYNC_EODHD_*, a symbol the provider does
// not know among known ones (exit status 3, the symbol listed), then a bad
// token (exit status 1); the token is in no line of the output.
func TestSyncCommand(t *testing.T) {
	const token = "cron-T0KEN-4a5b6c"
	fake := feedfake.New(token)
	fake.Synthetic = 2
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	env := map[string]string{
		"MARKETDATA_DATABASE_URL":     testenv.Postgres(t),
		"MARKETDATA_REDIS_URL":        testenv.Redis(t),
		"MARKETDATA_SYNC_EODHD_URL":   srv.URL + "/eodhd",
		"MARKETDATA_SYNC_EODHD_TOKEN": token,
	}
	getenv := func(k string) string { return env[k] }
	sync := func(args ...string) (string, int) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"sync", "--provider", "eodhd"}, args...), getenv, &out)
		code := 0
		var ee *cmdmain.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.Code
		case err != nil:
			code = 1
		}
		if strings.Contains(out.String(), token) || (err != nil && strings.Contains(err.Error(), token)) {
			t.Errorf("the token is in the output:\n%s\n%v", out.String(), err)
		}
		return out.String(), code
	}
	out, code := sync("--symbols", "S00000,S00001,NOPE", "--from", "2024-01-02", "--to", "2024-01-31")
	if code != 3 || !strings.Contains(out, "failed: NOPE: unknown to the provider") || !strings.Contains(out, "44 stored") {
		t.Fatalf("exit %d, want 3 with NOPE failed and 2×22 bars stored:\n%s", code, out)
	}
	out, code = sync("--symbols", "S00000,S00001", "--to", "2024-01-31")
	if code != 0 || !strings.Contains(out, "2 up to date") {
		t.Fatalf("exit %d, want 0 with both up to date:\n%s", code, out)
	}
	env["MARKETDATA_SYNC_EODHD_TOKEN"] = "wrong-" + token
	out, code = sync("--symbols", "S00000", "--from", "2024-02-01", "--to", "2024-02-29")
	if code != 1 || !strings.Contains(out, "0 synced") {
		t.Fatalf("exit %d with a bad token, want 1:\n%s", code, out)
	}
}
