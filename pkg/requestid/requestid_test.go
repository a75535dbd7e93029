package requestid

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"abc-123":                     true,
		"trace-123":                   true,
		"~!#$%&'*+.^_`|":              true,
		strings.Repeat("x", MaxLen):   true,
		"":                            false,
		strings.Repeat("x", MaxLen+1): false,
		"has space":                   false,
		"line\nbreak":                 false,
		"tab\t":                       false,
		"del\x7f":                     false,
		"naïve":                       false,
	} {
		if got := Valid(id); got != want {
			t.Errorf("Valid(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestFromKeepsValidAndReplacesInvalid(t *testing.T) {
	if got := From("abc-123"); got != "abc-123" {
		t.Errorf("From kept nothing of a valid id: %q", got)
	}
	a, b := From("bad id"), From("")
	if !Valid(a) || !Valid(b) || len(a) != 32 || a == b {
		t.Errorf("replacement ids %q and %q: want two different valid 32-digit ids", a, b)
	}
}

// BenchmarkNew is the cost of an id for a request that brings none.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = New()
	}
}
