package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/httpapi"
)

// apiDoc is the served OpenAPI documents of /v1 and /v2, loaded and
// checked once per test binary.
type apiDoc struct {
	v1, v2 *openAPIDoc
}

type openAPIDoc struct {
	doc    *openapi3.T
	router routers.Router
}

func loadDoc(t testing.TB) *apiDoc {
	t.Helper()
	return &apiDoc{v1: loadOneDoc(t, httpapi.OpenAPIJSON), v2: loadOneDoc(t, httpapi.OpenAPIV2JSON)}
}

func loadOneDoc(t testing.TB, served func() ([]byte, error)) *openAPIDoc {
	t.Helper()
	raw, err := served()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load openapi: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi document invalid: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &openAPIDoc{doc: doc, router: router}
}

// check validates one exchange against the document of its version: a
// documented path must answer a documented status with a body of its
// schema; an unknown path must answer marketstack's error shape.
func (d *apiDoc) check(req *http.Request, rec *httptest.ResponseRecorder) error {
	doc := d.v1
	if strings.HasPrefix(req.URL.Path, "/v2/") {
		doc = d.v2
	}
	route, params, err := doc.router.FindRoute(req)
	if err != nil {
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			return err
		}
		return doc.doc.Components.Schemas["Error"].Value.VisitJSON(body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(rec.Body.Bytes())
	return openapi3filter.ValidateResponse(req.Context(), in)
}

// newGet is a GET of target with header's name, value pairs set.
func newGet(target string, header ...string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// do sends a request through h and validates the answer.
func (d *apiDoc) do(t testing.TB, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := newGet("http://localhost:8081"+target, header...)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := d.check(req, rec); err != nil {
		t.Errorf("GET %s: %d response does not match the OpenAPI document: %v\n%s", target, rec.Code, err, rec.Body.Bytes())
	}
	return rec
}

func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(bytes.NewReader(rec.Body.Bytes())).Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body.Bytes(), err)
	}
	return v
}
