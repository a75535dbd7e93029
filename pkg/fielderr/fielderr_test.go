package fielderr

import (
	"errors"
	"fmt"
	"testing"
)

func TestList(t *testing.T) {
	var l List
	if err := l.Err(); err != nil {
		t.Fatalf("empty list: Err() = %v, want nil", err)
	}
	if l.Has("title") {
		t.Fatal("empty list has title")
	}
	l.Add("title", "must not be empty")
	l.Fields = append(l.Fields, Field{Name: "limit", Key: "invalid_limit", Message: "must be a whole number"})
	if !l.Has("title") || !l.Has("limit") || l.Has("tags") {
		t.Errorf("Has: %+v", l.Fields)
	}
	err := fmt.Errorf("create note: %w", l.Err())
	var got *List
	if !errors.As(err, &got) || got != &l {
		t.Fatalf("errors.As(%v) did not find the list", err)
	}
	if want := "invalid request: title: must not be empty; limit: must be a whole number"; l.Error() != want {
		t.Errorf("Error() = %q, want %q", l.Error(), want)
	}
}

func TestNilList(t *testing.T) {
	var l *List
	if l.Err() != nil || l.Has("x") {
		t.Fatal("a nil list reports failures")
	}
}
