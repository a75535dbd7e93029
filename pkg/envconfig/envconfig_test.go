package envconfig

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func reader(vars map[string]string) *Reader {
	return New(func(k string) string { return vars[k] }, "APP_")
}

func TestValuesAndDefaults(t *testing.T) {
	r := reader(map[string]string{
		"APP_NAME": "  svc ", "APP_LIST": " a, b ,,", "APP_N": "42", "APP_D": "250ms", "APP_LEVEL": "WARNING",
		"NAME": "without the prefix",
	})
	if got := r.String("NAME", "def"); got != "svc" {
		t.Errorf("String = %q", got)
	}
	if got := r.String("UNSET", "def"); got != "def" {
		t.Errorf("String default = %q", got)
	}
	if got := r.List("LIST"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("List = %q", got)
	}
	if got := r.List("UNSET"); got != nil {
		t.Errorf("List of unset = %q", got)
	}
	if got := r.Int("N", 1); got != 42 {
		t.Errorf("Int = %d", got)
	}
	if got := r.Int("UNSET", 7); got != 7 {
		t.Errorf("Int default = %d", got)
	}
	if got := r.Duration("D", time.Second); got != 250*time.Millisecond {
		t.Errorf("Duration = %v", got)
	}
	if got := r.Duration("UNSET", time.Second); got != time.Second {
		t.Errorf("Duration default = %v", got)
	}
	if got := r.Level("LEVEL", slog.LevelInfo); got != slog.LevelWarn {
		t.Errorf("Level = %v", got)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

// TestEveryProblemIsReported: a bad value yields the default and a problem
// naming the whole variable; all of them reach Err together.
func TestEveryProblemIsReported(t *testing.T) {
	r := reader(map[string]string{"APP_N": "4x", "APP_D": "-1s", "APP_E": "soon", "APP_LEVEL": "loud"})
	if got := r.Int("N", 3); got != 3 {
		t.Errorf("bad Int gave %d, want the default", got)
	}
	if got := r.Duration("D", time.Second); got != time.Second {
		t.Errorf("negative Duration gave %v, want the default", got)
	}
	r.Duration("E", time.Second)
	if got := r.Level("LEVEL", slog.LevelInfo); got != slog.LevelInfo {
		t.Errorf("bad Level gave %v, want the default", got)
	}
	r.Positive("ZERO", 0)
	r.Positive("ONE", time.Nanosecond)
	r.Fail("OTHER", "is wrong")
	err := r.Err()
	if err == nil {
		t.Fatal("no error")
	}
	for _, name := range []string{"APP_N ", "APP_D ", "APP_E ", "APP_LEVEL ", "APP_ZERO must be positive", "APP_OTHER is wrong"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %q: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), "APP_ONE") {
		t.Errorf("a positive duration was reported: %v", err)
	}
}

// TestBounds: DurationIn, DurationOrOff and IntIn accept their bounds and
// what lies between, 0 for DurationOrOff, and report anything else with
// the range and the value read.
func TestBounds(t *testing.T) {
	check := func(value string, read func(r *Reader), want string) {
		t.Helper()
		r := reader(map[string]string{"APP_X": value})
		read(r)
		err := r.Err()
		switch {
		case want == "" && err != nil:
			t.Errorf("APP_X=%s refused: %v", value, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("APP_X=%s: %v, want %q", value, err, want)
		}
	}
	in := func(r *Reader) { r.DurationIn("X", time.Second, 10*time.Millisecond, time.Minute) }
	orOff := func(r *Reader) { r.DurationOrOff("X", time.Second, 10*time.Millisecond, time.Minute) }
	count := func(r *Reader) { r.IntIn("X", 5, 1, 100) }
	for _, ok := range []string{"", "10ms", "30s", "1m"} {
		check(ok, in, "")
		check(ok, orOff, "")
	}
	check("0", orOff, "")
	check("0", in, "APP_X must be between 10ms and 1m0s (got 0s)")
	check("1us", in, "APP_X must be between 10ms and 1m0s (got 1µs)")
	check("1us", orOff, "APP_X must be 0 (off) or between 10ms and 1m0s (got 1µs)")
	check("100h", in, "APP_X must be between 10ms and 1m0s (got 100h0m0s)")
	check("-1s", in, "APP_X must be a non-negative duration")
	for _, ok := range []string{"", "1", "100"} {
		check(ok, count, "")
	}
	check("0", count, "APP_X must be between 1 and 100 (got 0)")
	check("99999999999", count, "APP_X must be between 1 and 100 (got 99999999999)")
}

// TestLoggedIsWhatWasRead: every setting read is logged once under its
// lower-case name, as its value read (the default when unset), with
// secrets masked; a Service logs the settings read after it too, since
// a service's Config logs whole through it.
func TestLoggedIsWhatWasRead(t *testing.T) {
	r := reader(map[string]string{
		"APP_DATABASE_URL": "postgres://app:db-s3cret@db:5432/app",
		"APP_REPLICA_URLS": "postgres://app:r1-s3cret@r1/app, postgres://app:r2-s3cret@r2/app",
		"APP_TOKEN":        "tok-s3cret",
		"APP_CACHE_TTL":    "2m",
		"APP_LOG_LEVEL":    "warning",
		"APP_POOL":         "7",
		"APP_ORIGINS":      "a, b",
	})
	s := r.Service(":8000")
	_ = r.DSN("DATABASE_URL")
	_ = r.DSNList("REPLICA_URLS")
	_ = r.Secret("TOKEN")
	_ = r.Secret("UNSET_TOKEN")
	_ = r.DurationIn("CACHE_TTL", time.Minute, time.Second, time.Hour)
	_ = r.IntIn("POOL", 3, 1, 10)
	_ = r.IntIn("POOL", 3, 1, 10) // read twice, logged once
	_ = r.List("ORIGINS")
	_ = r.String("MODE", "lease")
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", s)
	out := b.String()
	if strings.Contains(out, "s3cret") {
		t.Fatalf("logged a secret: %s", out)
	}
	for _, want := range []string{`"http_addr":":8000"`, `"log_level":"WARN"`, `"database_url":"postgres://app:xxxxx@db:5432/app"`,
		`"replica_urls":["postgres://app:xxxxx@r1/app","postgres://app:xxxxx@r2/app"]`, `"token":"xxxxx"`, `"unset_token":""`,
		`"cache_ttl":"2m0s"`, `"pool":7`, `"origins":["a","b"]`, `"mode":"lease"`, `"tracing":{"enabled":false`} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}
	if n := strings.Count(out, `"pool":`); n != 1 {
		t.Errorf("pool logged %d times: %s", n, out)
	}
}
