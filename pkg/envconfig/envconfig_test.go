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
