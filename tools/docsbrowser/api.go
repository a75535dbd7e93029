package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// methods are the operation keys of an OpenAPI path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists the operations of an OpenAPI document as "GET /v1/eod",
// sorted.
func operations(doc []byte) ([]string, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	var ops []string
	for path, item := range d.Paths {
		for key := range item {
			if slices.Contains(methods, key) {
				ops = append(ops, strings.ToUpper(key)+" "+path)
			}
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("openapi document: no operation")
	}
	slices.Sort(ops)
	return ops, nil
}

// diff returns what want has and got lacks, and what got has beyond want.
func diff(want, got []string) (missing, extra []string) {
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: status %d", url, resp.StatusCode)
	}
	return b, nil
}

func createNote(ctx context.Context, base, key, title string) error {
	body, err := json.Marshal(map[string]any{"title": title, "content": "created by make docs-browser"})
	if err != nil {
		return fmt.Errorf("create note: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/notes", strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("create note: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("create note: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create note: status %d", resp.StatusCode)
	}
	return nil
}
