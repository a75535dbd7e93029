package validate

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// RoutesDir holds each service's route table, <service>.txt, relative to
// the repository root. The service's TestRoutesFile writes it from the
// router itself (make routes) and fails when it is stale, so the checks
// here see every route the service serves, however its code registers it.
const RoutesDir = "deploy/routes"

// Route is one line of a route table.
type Route struct {
	Method string
	// Path is gin's, parameters as written (":id", "*asset").
	Path string
	// Public routes are the API: every gateway must route them to their
	// service. The others (probes, metrics, documents) no gateway may
	// reach.
	Public bool
}

// ReadRoutes reads a route table: "METHOD PATH public|internal" a line,
// blank lines and # comments skipped.
func ReadRoutes(path string) ([]Route, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read routes: %w", err)
	}
	var routes []Route
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[1], "/") || (f[2] != "public" && f[2] != "internal") {
			errs = append(errs, fmt.Errorf("%s:%d: %q is not \"METHOD /path public|internal\"", filepath.Base(path), n, line))
			continue
		}
		routes = append(routes, Route{Method: f[0], Path: f[1], Public: f[2] == "public"})
	}
	if len(routes) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s lists no route", path))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("read routes: %w", err)
	}
	return routes, nil
}

// HasInternal reports whether the service has an internal route for method
// and exactly path: what a probe or a scraper, which carry no key, must hit.
func (s ServiceSource) HasInternal(method, path string) bool {
	for _, r := range s.Routes {
		if !r.Public && r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

// Serves reports whether a request the gateway sends on for p reaches a
// public route: one at p, or below it unless p is exact, a parameter
// segment of the route matching any segment of p ("/v1/tickers" is served
// by "/v1/tickers/:symbol"). A gateway path served only by internal routes
// would expose them; one served by nothing is a dead route.
func (s ServiceSource) Serves(p GatewayPath) bool {
	want := segments(p.Path)
	for _, r := range s.Routes {
		if !r.Public {
			continue
		}
		got := segments(r.Path)
		n := 0
		for n < len(want) && n < len(got) {
			if strings.HasPrefix(got[n], "*") {
				return true
			}
			if got[n] != want[n] && !strings.HasPrefix(got[n], ":") {
				break
			}
			n++
		}
		switch {
		case n < len(want):
		case p.Match == Exact && len(got) == len(want):
			return true
		case p.Match == Prefix && len(got) >= len(want):
			return true
		case p.Match == Below && len(got) > len(want):
			return true
		}
	}
	return false
}

func segments(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// PathMatch is how a gateway path matches request paths.
type PathMatch int

// The matches the gateways use. Prefix is the Gateway API's PathPrefix and
// the Ingress's Prefix: whole segments, so /v1/notes matches /v1/notes and
// /v1/notes/… but never /v1/notesX. nginx's "location ^~ /v1/notes/" is
// Below: /v1/notes itself needs its exact location.
const (
	Exact PathMatch = iota
	Prefix
	Below
)

// GatewayPath is one path a gateway routes, and where to.
type GatewayPath struct {
	Path    string
	Match   PathMatch
	Service string
}

// reaches reports whether g matches every request for route (gin's path,
// whose parameter segments take any value): a prefix reaches a
// parameterised route only if it ends before the first parameter.
func (g GatewayPath) reaches(route string) bool {
	p := strings.TrimRight(g.Path, "/")
	switch g.Match {
	case Exact:
		return route == g.Path && !strings.ContainsAny(route, ":*")
	case Prefix:
		return p == "" || route == p || strings.HasPrefix(route, p+"/")
	default:
		return strings.HasPrefix(route, p+"/")
	}
}

// routeTo returns the gateway path that takes a request for route, as the
// Gateway API, the Ingress and nginx choose it: an exact match first, then
// the longest prefix.
func routeTo(paths []GatewayPath, route string) (GatewayPath, bool) {
	var best GatewayPath
	found := false
	for _, g := range paths {
		if !g.reaches(route) {
			continue
		}
		if !found || cmp.Compare(rank(g), rank(best)) > 0 {
			best, found = g, true
		}
	}
	return best, found
}

// rank orders the paths that match one request: exact first, then longer.
func rank(g GatewayPath) int {
	if g.Match == Exact {
		return 1 << 30
	}
	return len(g.Path)
}

// checkPaths holds one gateway's paths to the route tables in both
// directions: every public route of every service reaches that service,
// and every path the gateway routes is served by a public route of the
// service it goes to.
func (c *checker) checkPaths(where string, paths []GatewayPath, sources map[string]ServiceSource) {
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		for _, r := range sources[name].Routes {
			if !r.Public {
				continue
			}
			g, ok := routeTo(paths, r.Path)
			switch {
			case !ok:
				c.failf("%s: public route %s %s of %s is not routed (add its path to the HTTPRoute and the Ingress, then make gateway-routes)", where, r.Method, r.Path, name)
			case g.Service != name:
				c.failf("%s: public route %s %s goes to %s, want %s", where, r.Method, r.Path, g.Service, name)
			}
		}
	}
	for _, g := range paths {
		src, ok := sources[g.Service]
		if !ok {
			continue
		}
		if !src.Serves(g) {
			c.failf("%s: %s goes to %s, which serves no public route at or below it (deploy/routes/%s.txt)", where, g.Path, g.Service, g.Service)
		}
	}
}

// nginxLocation matches a generated location block of routes.conf.
var nginxLocation = regexp.MustCompile(`(?m)^location (=|\^~) (\S+) \{\s*proxy_pass http://([a-z0-9-]+);\s*\}`)

// NginxPaths reads the locations of the compose gateway's routes.conf. The
// pair make gateway-routes writes for a PathPrefix, "= /v1/notes" and
// "^~ /v1/notes/" to one upstream, is read back as that prefix, so that
// each gateway path is judged as the HTTPRoute states it.
func NginxPaths(conf []byte) []GatewayPath {
	var out []GatewayPath
	exact := map[string]int{}
	for _, m := range nginxLocation.FindAllSubmatch(conf, -1) {
		g := GatewayPath{Path: string(m[2]), Match: Exact, Service: string(m[3])}
		if string(m[1]) == "^~" {
			// A ^~ location without the trailing slash would match
			// /v1/notesX too: at least a whole-segment prefix.
			g.Match = Prefix
			if p, ok := strings.CutSuffix(g.Path, "/"); ok {
				g.Path, g.Match = p, Below
				if i, ok := exact[p]; ok && out[i].Service == g.Service {
					out[i].Match = Prefix
					continue
				}
			}
		} else {
			exact[g.Path] = len(out)
		}
		out = append(out, g)
	}
	return out
}

// CheckNginx checks the compose gateway's routes.conf in both directions,
// like the HTTPRoutes and Ingresses of an overlay.
func CheckNginx(where string, conf []byte, sources map[string]ServiceSource) error {
	c := &checker{}
	paths := NginxPaths(conf)
	if len(paths) == 0 {
		c.failf("%s: no location routes to a service", where)
	}
	c.checkPaths(where, paths, sources)
	return errors.Join(c.errs...)
}
