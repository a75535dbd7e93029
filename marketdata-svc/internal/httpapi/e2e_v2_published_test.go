//go:build contract

package httpapi_test

// This file is built only with the contract tag (make v2-contract): it
// needs marketstack's published v2 document, which is marketstack's and
// so is not kept in this repository. Run where it is:
//
//	MARKETSTACK_V2_OPENAPI=path/to/marketstack-v2-openapi.json make v2-contract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// unavailableDatasets are the published functions whose dataset the demo
// does not load (none: each dataset has a sample).
var unavailableDatasets = []string{}

// publishedMatchingFloor is how many published operations answered 200
// with the published types when this test was written: fewer is a
// regression.
const publishedMatchingFloor = 45

// TestPublishedV2Contract holds the service to marketstack's published v2
// document, read from the file MARKETSTACK_V2_OPENAPI names (it is
// marketstack's, so it is not kept in this repository): every published
// operation is in the served document; called on the demo data, each
// answers 200 with a body of the published response schema (every
// property nullable, as marketstack itself sends nulls), or, for a
// dataset not loaded, 403 function_access_restricted naming it.
func TestPublishedV2Contract(t *testing.T) {
	path := os.Getenv("MARKETSTACK_V2_OPENAPI")
	if path == "" {
		t.Fatal("MARKETSTACK_V2_OPENAPI is unset: set it to marketstack's published v2 OpenAPI document (repository api-evangelist/marketstack, openapi/marketstack-v2-openapi.json)")
	}
	published, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	nullable := map[*openapi3.Schema]bool{}
	for _, s := range published.Components.Schemas {
		allNullable(s, nullable)
	}
	e := demoE2E(t)
	type result struct{ op, why string }
	var matching, restricted []string
	var other []result
	tmpls := published.Paths.InMatchingOrder()
	sort.Strings(tmpls)
	for _, tmpl := range tmpls {
		item := published.Paths.Value(tmpl)
		if item.Get == nil {
			continue
		}
		op := "GET " + tmpl
		concrete := strings.NewReplacer("{symbol}", "GOOG", "{mic}", "XNAS", "{date}", "2008-10-14", "{unit}", "USD").Replace(tmpl)
		route, _, err := e.doc.v2.router.FindRoute(newGet("http://localhost:8081/v2" + concrete))
		if err != nil {
			t.Errorf("%s: not in the served v2 document: %v", op, err)
			continue
		}
		c, ok := v2Calls[route.Path]
		if !ok {
			t.Errorf("%s: served as %s, with no call in v2Calls", op, route.Path)
			continue
		}
		rec := e.get(t, c.path, vals(c.query...))
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			other = append(other, result{op, fmt.Sprintf("%d, not JSON", rec.Code)})
			continue
		}
		if slices.Contains(unavailableDatasets, tmpl) {
			msg, _ := body.(map[string]any)["error"].(map[string]any)
			if rec.Code != http.StatusForbidden || msg["code"] != "function_access_restricted" || !strings.Contains(fmt.Sprint(msg["message"]), "dataset") {
				t.Errorf("%s: %d %s, want 403 function_access_restricted naming the dataset", op, rec.Code, rec.Body)
				continue
			}
			restricted = append(restricted, op)
			continue
		}
		if rec.Code != http.StatusOK {
			other = append(other, result{op, fmt.Sprintf("status %d: %s", rec.Code, rec.Body)})
			continue
		}
		resp := item.Get.Responses.Status(http.StatusOK)
		if resp == nil || resp.Value.Content.Get("application/json") == nil {
			other = append(other, result{op, "the published document gives no 200 JSON schema"})
			continue
		}
		schema := resp.Value.Content.Get("application/json").Schema
		allNullable(schema, nullable)
		if err := schema.Value.VisitJSON(body, openapi3.MultiErrors()); err != nil {
			other = append(other, result{op, firstLine(err.Error())})
			continue
		}
		// The published schemas require nothing, so an answer missing a
		// field, or a whole object, would pass the types: marketstack
		// sends every field it documents (null when it has no value).
		if missing := missingFields("$", body, schema.Value, nil); len(missing) > 0 {
			other = append(other, result{op, "missing " + strings.Join(missing[:min(len(missing), 4)], ", ")})
			continue
		}
		matching = append(matching, op)
	}
	total := len(matching) + len(restricted) + len(other)
	t.Logf("%d of %d published operations answer 200 with matching types", len(matching), total)
	t.Logf("answer 403 function_access_restricted: %d", len(restricted))
	for _, r := range other {
		t.Logf("does not match: %s: %s", r.op, r.why)
	}
	if len(matching) < publishedMatchingFloor {
		t.Errorf("%d operations match the published types, fewer than the %d that did", len(matching), publishedMatchingFloor)
	}
	if len(restricted) != len(unavailableDatasets) {
		t.Errorf("%d operations answer 403 function_access_restricted, want %d", len(restricted), len(unavailableDatasets))
	}
}

// allNullable makes s and every schema under it accept null.
func allNullable(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	s.Nullable = true
	for _, p := range s.Properties {
		allNullable(p, seen)
	}
	allNullable(s.Items, seen)
	allNullable(s.AdditionalProperties.Schema, seen)
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range group {
			allNullable(r, seen)
		}
	}
}

// missingFields lists the properties schema documents that v lacks, at
// every depth, following arrays and allOf.
func missingFields(path string, v any, schema *openapi3.Schema, out []string) []string {
	if schema == nil || v == nil {
		return out
	}
	for _, sub := range schema.AllOf {
		out = missingFields(path, v, sub.Value, out)
	}
	switch x := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(schema.Properties))
		for name := range schema.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fv, ok := x[name]
			if !ok {
				out = append(out, path+"."+name)
				continue
			}
			out = missingFields(path+"."+name, fv, schema.Properties[name].Value, out)
		}
	case []any:
		if schema.Items != nil && len(x) > 0 {
			out = missingFields(path+"[0]", x[0], schema.Items.Value, out)
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
