package main

import (
	"regexp"
	"testing"
)

// The ids must have notes-svc's shape (the service's GET validates it) and
// rise strictly, within a millisecond too, as notes-svc's (google/uuid's
// NewV7) do, so that the ceiling's inserts cost PostgreSQL what the
// service's cost: ids ordered only by the millisecond fail here.
func TestNewIDShapeAndOrder(t *testing.T) {
	shape := regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	prev := ""
	for i := range 20000 {
		id, err := newID()
		if err != nil {
			t.Fatal(err)
		}
		if !shape.MatchString(id) {
			t.Fatalf("id %q is not a 26-character ULID encoding of 128 bits", id)
		}
		if id <= prev {
			t.Fatalf("id %d (%q) does not sort after the one before (%q)", i, id, prev)
		}
		prev = id
	}
}
