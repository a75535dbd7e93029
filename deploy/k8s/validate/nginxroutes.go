package validate

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// NginxRoutes renders the path routing of hr as nginx location blocks for
// the compose gateway (deploy/gateway/routes.conf), so that the HTTPRoute
// stays the one source of the routes. Each backend becomes an upstream of
// the backend's name, which the including configuration defines. Only what
// both can express the same way is accepted: path matches (PathPrefix,
// Exact) on rules with one backend and no filters, header, query or method
// matches, or timeouts; anything else is an error rather than a route that
// silently differs. Hostnames are not rendered: the compose gateway answers
// on any host.
func NginxRoutes(hr *gatewayv1.HTTPRoute, source string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated from %s (HTTPRoute %s) by deploy/k8s/validate; do not edit.\n", source, hr.Name)
	b.WriteString("# Regenerate with make gateway-routes.\n")
	b.WriteString("# make k8s-validate fails when this file and the HTTPRoute differ.\n")
	var errs []error
	seen := map[string]string{}
	for i, rule := range hr.Spec.Rules {
		where := fmt.Sprintf("HTTPRoute %s rule %d", hr.Name, i+1)
		upstream, port, err := ruleBackend(rule)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		fmt.Fprintf(&b, "\n# rule %d: backend %s port %d\n", i+1, upstream, port)
		for _, m := range rule.Matches {
			locs, err := matchLocations(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			for _, loc := range locs {
				if prev, ok := seen[loc]; ok {
					errs = append(errs, fmt.Errorf("%s: location %q already goes to %s", where, loc, prev))
					continue
				}
				seen[loc] = upstream
				fmt.Fprintf(&b, "location %s {\n    proxy_pass http://%s;\n}\n", loc, upstream)
			}
		}
	}
	if len(seen) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("HTTPRoute %s routes no path", hr.Name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// upstreamName is what nginx accepts as an upstream name and a Kubernetes
// Service name always is (RFC 1123 label).
var upstreamName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ruleBackend returns the one backend of a rule that has nothing else.
func ruleBackend(rule gatewayv1.HTTPRouteRule) (string, int32, error) {
	if len(rule.Filters) > 0 {
		return "", 0, errors.New("filters are not rendered for nginx")
	}
	if rule.Timeouts != nil {
		return "", 0, errors.New("timeouts are not rendered for nginx (deploy/gateway/nginx.conf sets them)")
	}
	if len(rule.BackendRefs) != 1 {
		return "", 0, fmt.Errorf("%d backends, want 1", len(rule.BackendRefs))
	}
	ref := rule.BackendRefs[0]
	if len(ref.Filters) > 0 {
		return "", 0, errors.New("backend filters are not rendered for nginx")
	}
	if (ref.Kind != nil && *ref.Kind != "Service") || (ref.Group != nil && *ref.Group != "") {
		return "", 0, errors.New("the backend must be a core Service")
	}
	if ref.Port == nil {
		return "", 0, fmt.Errorf("backend %s has no port", ref.Name)
	}
	if !upstreamName.MatchString(string(ref.Name)) {
		return "", 0, fmt.Errorf("backend name %q is not a Service name", ref.Name)
	}
	return string(ref.Name), int32(*ref.Port), nil
}

// matchLocations returns the nginx locations that match the same paths as
// m. A PathPrefix matches whole segments, so /v1/notes becomes the exact
// location /v1/notes and the prefix /v1/notes/ (never /v1/notesX); ^~ keeps
// any regular-expression location from taking its requests.
func matchLocations(m gatewayv1.HTTPRouteMatch) ([]string, error) {
	if len(m.Headers) > 0 || len(m.QueryParams) > 0 || m.Method != nil {
		return nil, errors.New("header, query and method matches are not rendered for nginx")
	}
	if m.Path == nil || m.Path.Value == nil {
		return nil, errors.New("a match without a path is not rendered for nginx")
	}
	v := *m.Path.Value
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\n;{}\"'\\$#") {
		return nil, fmt.Errorf("path %q is not a plain absolute path", v)
	}
	typ := gatewayv1.PathMatchPathPrefix
	if m.Path.Type != nil {
		typ = *m.Path.Type
	}
	switch typ {
	case gatewayv1.PathMatchExact:
		return []string{"= " + v}, nil
	case gatewayv1.PathMatchPathPrefix:
		// The Gateway API ignores a trailing slash on a prefix.
		v = strings.TrimRight(v, "/")
		if v == "" {
			return nil, errors.New("the prefix / would replace the gateway's catch-all 404")
		}
		return []string{"= " + v, "^~ " + v + "/"}, nil
	default:
		return nil, fmt.Errorf("path match type %s is not rendered for nginx", typ)
	}
}

// upstreamBlock matches the start of an nginx upstream block.
var upstreamBlock = regexp.MustCompile(`(?m)^\s*upstream\s+([a-z0-9-]+)\s*\{`)

// serverLine matches a server line in an upstream block: the address.
var serverLine = regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+)`)

// NginxUpstreams reads the upstream blocks of an nginx configuration: each
// upstream's name and the addresses of its servers.
func NginxUpstreams(conf []byte) map[string][]string {
	out := map[string][]string{}
	idx := upstreamBlock.FindAllSubmatchIndex(conf, -1)
	for i, m := range idx {
		end := len(conf)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		body := conf[m[1]:end]
		if j := bytes.IndexByte(body, '}'); j >= 0 {
			body = body[:j]
		}
		var servers []string
		for _, s := range serverLine.FindAllSubmatch(body, -1) {
			servers = append(servers, string(s[1]))
		}
		out[string(conf[m[2]:m[3]])] = servers
	}
	return out
}
