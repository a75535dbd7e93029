package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// service is one service under test and the call its reference must make.
type service struct {
	name string
	base string
	key  string
	// docs are the documents the page offers, by selector name.
	docs []document
	// scheme is the security scheme the key is entered for.
	scheme string
	try    tryCall
}

type document struct{ name, url string }

// tryCall is the operation run with "Try it out": params are typed into
// its parameter fields, and the answer's body must contain want.
type tryCall struct {
	method, path string
	params       map[string]string
	want         string
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("docsbrowser", flag.ContinueOnError)
	notesURL := fs.String("notes", "http://127.0.0.1:8080", "notes-svc base URL")
	marketURL := fs.String("marketdata", "http://127.0.0.1:8081", "marketdata-svc base URL")
	out := fs.String("out", ".artifacts", "directory for the screenshots")
	chromium := fs.String("chromium", "/usr/bin/chromium", "the browser to drive")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	notesKey, marketKey := getenv("NOTES_KEY"), getenv("MARKETDATA_KEY")
	if notesKey == "" || marketKey == "" {
		return errors.New("NOTES_KEY and MARKETDATA_KEY must hold demo keys (make up writes them to .stack/demo-keys.env)")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// The notes list must hold something of the demo account's: a note
	// with a title of this run, created through the API.
	title := fmt.Sprintf("docs browser check %d", time.Now().UnixNano())
	base := strings.TrimSuffix(*notesURL, "/")
	if err := createNote(ctx, base, notesKey, title); err != nil {
		return err
	}
	services := []service{
		{
			name: "notes", base: base, key: notesKey, scheme: "bearerAuth",
			docs: []document{{"v1", "/v1/openapi.json"}},
			try:  tryCall{method: "GET", path: "/v1/notes", want: title},
		},
		{
			name: "marketdata", base: strings.TrimSuffix(*marketURL, "/"), key: marketKey, scheme: "accessKey",
			docs: []document{{"v1", "/v1/openapi.json"}, {"v2", "/v2/openapi.json"}},
			try:  tryCall{method: "GET", path: "/v1/eod", params: map[string]string{"symbols": "GOOG"}, want: `"symbol": "GOOG"`},
		},
	}
	b, err := newBrowser(ctx, *chromium)
	if err != nil {
		return err
	}
	defer b.close()
	var failed []string
	for _, s := range services {
		shot := filepath.Join(*out, "docs-"+s.name+".png")
		report, err := b.check(ctx, s, shot)
		for _, line := range report {
			fmt.Fprintf(stdout, "%s: %s\n", s.name, line)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: FAIL: %v\n", s.name, err)
			failed = append(failed, s.name)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok, screenshot %s\n", s.name, shot)
	}
	if len(failed) > 0 {
		return fmt.Errorf("/docs failed in the browser for %s", strings.Join(failed, ", "))
	}
	return nil
}
