// Package validate checks the Kubernetes manifests under deploy/k8s against
// the Kubernetes API types and against the services they deploy: every
// rendered object decodes strictly, every environment variable and port the
// manifests name exists in the services' source, and the gateways route
// exactly the services' public routes, as the route tables their routers
// write (deploy/routes) list them.
package validate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ServiceSource is what the manifests may rely on in one service: its
// variables, read from its Go source, and its routes, from the route table
// its router writes, so that a renamed variable or route breaks validation.
type ServiceSource struct {
	// Name is the service and module directory, e.g. "notes-svc".
	Name string
	// Prefix starts every environment variable of the service, e.g. "NOTES_".
	Prefix string
	// Env holds every variable the config package reads.
	Env map[string]bool
	// Routes are every route of the service (deploy/routes/<name>.txt).
	Routes []Route
}

// Services maps the deployed service names to their variable prefixes.
var Services = map[string]string{
	"notes-svc":      "NOTES_",
	"marketdata-svc": "MARKETDATA_",
}

// envName is the shape of a variable name or of its suffix after the prefix.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// LoadServiceSource reads the config package and the route table of service
// name under the repository root.
func LoadServiceSource(root, name string) (ServiceSource, error) {
	prefix, ok := Services[name]
	if !ok {
		return ServiceSource{}, fmt.Errorf("load %s: unknown service", name)
	}
	src := ServiceSource{Name: name, Prefix: prefix, Env: map[string]bool{}}

	cfgFiles, err := parseDir(filepath.Join(root, name, "internal", "config"))
	if err != nil {
		return src, fmt.Errorf("load %s config: %w", name, err)
	}
	for _, f := range cfgFiles {
		collectEnv(f, prefix, src.Env)
	}
	// The settings every service shares (HTTP_ADDR, REQUEST_TIMEOUT, …) are
	// read once, by pkg/envconfig's Service, under each service's prefix.
	shared, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "pkg", "envconfig", "service.go"), nil, 0)
	if err != nil {
		return src, fmt.Errorf("load %s shared config: %w", name, err)
	}
	collectEnv(shared, prefix, src.Env)
	for _, must := range []string{"DATABASE_URL", "HTTP_ADDR"} {
		if !src.Env[prefix+must] {
			return src, fmt.Errorf("load %s config: found no %s%s among %v: the source layout changed, update source.go", name, prefix, must, slices.Sorted(maps.Keys(src.Env)))
		}
	}

	if src.Routes, err = ReadRoutes(filepath.Join(root, RoutesDir, name+".txt")); err != nil {
		return src, fmt.Errorf("load %s: %w", name, err)
	}
	return src, nil
}

func parseDir(dir string) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return files, nil
}

// collectEnv records the first argument of every call in f that names a
// variable: either the full name ("MARKETDATA_CACHE_TTL") or the part after
// the prefix ("HTTP_ADDR", or Prefix+"HTTP_ADDR"), as the services' getenv
// readers take it.
func collectEnv(f *ast.File, prefix string, into map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		arg := call.Args[0]
		if bin, ok := arg.(*ast.BinaryExpr); ok && bin.Op == token.ADD {
			arg = bin.Y
		}
		s, ok := stringLit(arg)
		if !ok || !envName.MatchString(s) {
			return true
		}
		if !strings.HasPrefix(s, prefix) {
			s = prefix + s
		}
		into[s] = true
		return true
	})
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
