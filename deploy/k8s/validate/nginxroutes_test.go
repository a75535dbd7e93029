package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The HTTPRoute the compose gateway's routes come from, and the files of
// that gateway, relative to the repository root.
const (
	httpRouteFile  = "deploy/k8s/base/gateway-api/httproute.yaml"
	routesConfFile = "deploy/gateway/routes.conf"
	upstreamsFile  = "deploy/gateway/upstreams.conf"
)

func loadHTTPRoute(t *testing.T) *gatewayv1.HTTPRoute {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, httpRouteFile))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := newDecoder(t).Decode(raw)
	if err != nil {
		t.Fatalf("%s: %v", httpRouteFile, err)
	}
	hr, ok := obj.(*gatewayv1.HTTPRoute)
	if !ok {
		t.Fatalf("%s holds a %T, want an HTTPRoute", httpRouteFile, obj)
	}
	return hr
}

// TestGatewayRoutes fails when deploy/gateway/routes.conf is not what the
// HTTPRoute renders to; with UPDATE_GATEWAY_ROUTES=1 (make gateway-routes)
// it rewrites the file instead.
func TestGatewayRoutes(t *testing.T) {
	want, err := NginxRoutes(loadHTTPRoute(t), httpRouteFile)
	if err != nil {
		t.Fatalf("rendering %s: %v", httpRouteFile, err)
	}
	path := filepath.Join(repoRoot, routesConfFile)
	if os.Getenv("UPDATE_GATEWAY_ROUTES") == "1" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", routesConfFile)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what %s renders to; run make gateway-routes and commit the result.\n--- rendered:\n%s", routesConfFile, httpRouteFile, want)
	}
	// Both directions against the route tables: every public route
	// reaches its service through the compose gateway, and every location
	// is served by one.
	if err := CheckNginx(routesConfFile, got, loadSources(t)); err != nil {
		t.Errorf("%v", err)
	}
}

// TestNginxPathsCatchMistakes plants one mistake at a time in the compose
// gateway's routes and expects CheckNginx to name it, in each direction.
func TestNginxPathsCatchMistakes(t *testing.T) {
	conf, err := os.ReadFile(filepath.Join(repoRoot, routesConfFile))
	if err != nil {
		t.Fatal(err)
	}
	sources := loadSources(t)
	if err := CheckNginx("routes.conf", conf, sources); err != nil {
		t.Fatalf("unbroken routes.conf fails: %v", err)
	}
	location := func(loc, svc string) string {
		return "location " + loc + " {\n    proxy_pass http://" + svc + ";\n}\n"
	}
	for name, tc := range map[string]struct {
		conf, want string
	}{
		"public route missing": {
			strings.Replace(strings.Replace(string(conf), location("= /v2/tickerslist", "marketdata-svc"), "", 1),
				location("^~ /v2/tickerslist/", "marketdata-svc"), "", 1),
			"public route GET /v2/tickerslist of marketdata-svc is not routed"},
		"only the prefix below": {
			strings.Replace(string(conf), location("= /v1/notes", "notes-svc"), "", 1),
			"public route GET /v1/notes of notes-svc is not routed"},
		"wrong service": {
			strings.Replace(string(conf), location("^~ /v1/notes/", "notes-svc"), location("^~ /v1/notes/", "marketdata-svc"), 1),
			"public route DELETE /v1/notes/:id goes to marketdata-svc, want notes-svc"},
		"path with no route": {
			string(conf) + location("= /v1/news", "marketdata-svc"),
			"/v1/news goes to marketdata-svc, which serves no public route"},
		"internal route exposed": {
			string(conf) + location("= /metrics", "notes-svc"),
			"/metrics goes to notes-svc, which serves no public route"},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckNginx("routes.conf", []byte(tc.conf), sources)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestGatewayUpstreams checks deploy/gateway/upstreams.conf against the
// HTTPRoute: every backend is an upstream with at least two replicas, each
// on the backend's port.
func TestGatewayUpstreams(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, upstreamsFile))
	if err != nil {
		t.Fatal(err)
	}
	ups := NginxUpstreams(raw)
	for _, rule := range loadHTTPRoute(t).Spec.Rules {
		name, port, err := ruleBackend(rule)
		if err != nil {
			t.Fatal(err)
		}
		servers, ok := ups[name]
		if !ok {
			t.Errorf("%s: no upstream %s", upstreamsFile, name)
			continue
		}
		if len(servers) < 2 {
			t.Errorf("%s: upstream %s has %d servers, want at least 2 replicas", upstreamsFile, name, len(servers))
		}
		for _, s := range servers {
			if !strings.HasSuffix(s, ":"+strconv.Itoa(int(port))) {
				t.Errorf("%s: upstream %s server %s is not on the backend's port %d", upstreamsFile, name, s, port)
			}
		}
	}
}

// TestNginxRoutesRenders pins the shape of a rendered rule: a prefix is an
// exact location plus a segment prefix, an exact match one exact location.
func TestNginxRoutesRenders(t *testing.T) {
	hr := routeOf(t, `
  rules:
    - matches:
        - path: {type: PathPrefix, value: /v1/things/}
        - path: {type: Exact, value: /v1/one}
      backendRefs:
        - {name: things-svc, port: 9000}
`)
	out, err := NginxRoutes(hr, "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# rule 1: backend things-svc port 9000\n",
		"location = /v1/things {\n    proxy_pass http://things-svc;\n}\n",
		"location ^~ /v1/things/ {\n    proxy_pass http://things-svc;\n}\n",
		"location = /v1/one {\n    proxy_pass http://things-svc;\n}\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rendered routes lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "location ^~ /v1/one/") {
		t.Errorf("an Exact match also got a prefix location:\n%s", out)
	}
}

// TestNginxRoutesRejects proves that what nginx would route differently is
// an error, not a quietly different route.
func TestNginxRoutesRejects(t *testing.T) {
	for name, rules := range map[string]string{
		"regex path": `
    - matches: [{path: {type: RegularExpression, value: "/v1/.*"}}]
      backendRefs: [{name: a, port: 1}]`,
		"header match": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}, headers: [{name: x, value: v}]}]
      backendRefs: [{name: a, port: 1}]`,
		"method match": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}, method: GET}]
      backendRefs: [{name: a, port: 1}]`,
		"two backends": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}}]
      backendRefs: [{name: a, port: 1}, {name: b, port: 1}]`,
		"filter": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x, value: v}]}}]
      backendRefs: [{name: a, port: 1}]`,
		"catch-all prefix": `
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{name: a, port: 1}]`,
		"same path twice": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}}]
      backendRefs: [{name: a, port: 1}]
    - matches: [{path: {type: PathPrefix, value: /v1/a/}}]
      backendRefs: [{name: b, port: 1}]`,
		"no port": `
    - matches: [{path: {type: PathPrefix, value: /v1/a}}]
      backendRefs: [{name: a}]`,
		"nginx syntax in path": `
    - matches: [{path: {type: PathPrefix, value: "/v1/a;return"}}]
      backendRefs: [{name: a, port: 1}]`,
	} {
		t.Run(name, func(t *testing.T) {
			if out, err := NginxRoutes(routeOf(t, "  rules:"+rules+"\n"), "test.yaml"); err == nil {
				t.Errorf("rendered without error:\n%s", out)
			}
		})
	}
}

// routeOf decodes an HTTPRoute with the given spec body (after parentRefs).
func routeOf(t *testing.T, spec string) *gatewayv1.HTTPRoute {
	t.Helper()
	doc := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: t\nspec:\n  parentRefs: [{name: gw}]\n" + spec
	obj, err := newDecoder(t).Decode([]byte(doc))
	if err != nil {
		t.Fatalf("decoding test route: %v\n%s", err, doc)
	}
	return obj.(*gatewayv1.HTTPRoute)
}
