package auth

import (
	"strings"
	"testing"
	"time"
)

// TestCheckAccountName: printable names of 1..100 bytes pass; empty, long,
// invalid UTF-8, padded names and any control or non-printable character
// are refused, and Printable quotes exactly what CheckAccountName refuses
// for its characters.
func TestCheckAccountName(t *testing.T) {
	for _, ok := range []string{"acme", "Acme Corp.", "müller-gmbh", "日本", strings.Repeat("a", 100)} {
		if err := CheckAccountName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
		if Printable(ok) != ok {
			t.Errorf("Printable(%q) = %q", ok, Printable(ok))
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 101), "a\nb", "a\tb", "a\rb", "\x1b[31mred", "a\x00", " acme", "acme ", "a\u00a0b", "a\u2028b", "a\u202eb", "\xff"} {
		if err := CheckAccountName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, bad := range []string{"a\nb", "a\tb", "\x1b[31mred", "a\u202eb", "\xff"} {
		if p := Printable(bad); p == bad || strings.ContainsAny(p, "\n\t\x1b") {
			t.Errorf("Printable(%q) = %q", bad, p)
		}
	}
}

// TestParseScopes: known scopes pass, repeats dropped; an empty list, an
// empty item or an unknown scope is refused.
func TestParseScopes(t *testing.T) {
	known := []string{"eod", "tickers"}
	if got, err := ParseScopes(" eod, tickers,eod", known); err != nil || strings.Join(got, ",") != "eod,tickers" {
		t.Errorf("good list: %v, %v", got, err)
	}
	for _, bad := range []string{"", " ", ",", "eod,", "eod,bogus", "EOD"} {
		if got, err := ParseScopes(bad, known); err == nil {
			t.Errorf("%q accepted: %v", bad, got)
		}
	}
}

// TestCheckKeyLifetime: 0 and the range pass; negative, tiny and huge
// lifetimes are refused.
func TestCheckKeyLifetime(t *testing.T) {
	for _, ok := range []time.Duration{0, time.Minute, 720 * time.Hour, MaxKeyLifetime} {
		if err := CheckKeyLifetime(ok); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	for _, bad := range []time.Duration{-time.Hour, time.Nanosecond, time.Second, MaxKeyLifetime + time.Hour} {
		if err := CheckKeyLifetime(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
