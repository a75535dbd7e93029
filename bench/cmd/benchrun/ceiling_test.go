package main

import (
	"net/http"
	"testing"
)

func TestCeilingHeadersLeaveOutWhatNetHTTPWrites(t *testing.T) {
	h := http.Header{"Date": {"x"}, "Content-Length": {"9"}, "Content-Type": {"application/json"},
		"Etag": {`"e"`}, "X-Request-Id": {"r"}, "Ratelimit": {`"second";r=1;t=1`}}
	got := string(ceilingHeaders(h))
	want := "Etag: \"e\"\nRatelimit: \"second\";r=1;t=1\nX-Request-Id: r\n"
	if got != want {
		t.Fatalf("ceilingHeaders = %q, want %q", got, want)
	}
}
