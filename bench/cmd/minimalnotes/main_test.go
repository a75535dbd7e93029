package main

import (
	"regexp"
	"testing"
	"time"
)

// The ids must have notes-svc's shape (the service's GET validates it) and
// sort by creation time, so that the ceiling's inserts land on the primary
// key's last page as the service's do.
func TestNewIDShapeAndOrder(t *testing.T) {
	shape := regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := newID(t0), newID(t0.Add(time.Millisecond))
	for _, id := range []string{a, b} {
		if !shape.MatchString(id) {
			t.Fatalf("id %q is not a 26-character ULID encoding of 128 bits", id)
		}
	}
	if a >= b {
		t.Fatalf("ids a millisecond apart do not sort by time: %q >= %q", a, b)
	}
	if newID(t0) == a {
		t.Fatal("two ids of the same millisecond are equal")
	}
}
