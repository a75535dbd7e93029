package main

import (
	"slices"
	"testing"
)

func TestOperations(t *testing.T) {
	doc := []byte(`{"openapi":"3.1.0","paths":{
		"/v1/notes":{"parameters":[],"summary":"s","get":{},"post":{},"x-extra":{}},
		"/v1/notes/{id}":{"delete":{},"patch":{}}}}`)
	got, err := operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DELETE /v1/notes/{id}", "GET /v1/notes", "PATCH /v1/notes/{id}", "POST /v1/notes"}
	if !slices.Equal(got, want) {
		t.Errorf("operations %v, want %v", got, want)
	}
	if _, err := operations([]byte(`{"paths":{}}`)); err == nil {
		t.Error("a document without operations: no error")
	}
	if _, err := operations([]byte(`<html>`)); err == nil {
		t.Error("not JSON: no error")
	}
}

func TestDiff(t *testing.T) {
	missing, extra := diff([]string{"GET /a", "GET /b"}, []string{"GET /b", "GET ?"})
	if !slices.Equal(missing, []string{"GET /a"}) || !slices.Equal(extra, []string{"GET ?"}) {
		t.Errorf("missing %v, extra %v", missing, extra)
	}
	if m, e := diff([]string{"GET /a"}, []string{"GET /a"}); m != nil || e != nil {
		t.Errorf("equal lists: missing %v, extra %v", m, e)
	}
}
