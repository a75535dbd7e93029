// Package validate checks the Kubernetes manifests under deploy/k8s against
// the Kubernetes API types and against the services they deploy: every
// rendered object decodes strictly, and every environment variable, probe
// path, port and gateway route the manifests name exists in the services'
// source.
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

// ServiceSource is what the manifests may rely on in one service, read from
// its Go source so that a renamed variable or route breaks validation.
type ServiceSource struct {
	// Name is the service and module directory, e.g. "notes-svc".
	Name string
	// Prefix starts every environment variable of the service, e.g. "NOTES_".
	Prefix string
	// Env holds every variable the config package reads.
	Env map[string]bool
	// GETRoutes holds the full paths of every GET route, with gin's
	// parameters as written (":id").
	GETRoutes map[string]bool
}

// Services maps the deployed service names to their variable prefixes.
var Services = map[string]string{
	"notes-svc":      "NOTES_",
	"marketdata-svc": "MARKETDATA_",
}

// envName is the shape of a variable name or of its suffix after the prefix.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// LoadServiceSource reads the config and HTTP packages of service name under
// the repository root.
func LoadServiceSource(root, name string) (ServiceSource, error) {
	prefix, ok := Services[name]
	if !ok {
		return ServiceSource{}, fmt.Errorf("load %s: unknown service", name)
	}
	src := ServiceSource{Name: name, Prefix: prefix, Env: map[string]bool{}, GETRoutes: map[string]bool{}}

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

	apiFiles, err := parseDir(filepath.Join(root, name, "internal", "httpapi"))
	if err != nil {
		return src, fmt.Errorf("load %s routes: %w", name, err)
	}
	collectRoutes(apiFiles, src.GETRoutes)
	if len(src.GETRoutes) == 0 {
		return src, fmt.Errorf("load %s routes: no GET route found in internal/httpapi", name)
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

// collectRoutes records the GET routes registered in files, joining gin
// group prefixes: `v1 := e.Group("/v1")` then `v1.GET("/eod", ...)` is
// "/v1/eod". A group handed to a function (`s.noteRoutes(v1)`) prefixes the
// routes that function registers on the matching parameter, and on the
// groups it makes from that parameter.
func collectRoutes(files []*ast.File, into map[string]bool) {
	groups := map[string]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			lhs, ok := as.Lhs[0].(*ast.Ident)
			call, ok2 := as.Rhs[0].(*ast.CallExpr)
			if !ok || !ok2 {
				return true
			}
			if recv, method, ok := selector(call); ok && method == "Group" && len(call.Args) > 0 {
				if p, ok := stringLit(call.Args[0]); ok {
					groups[lhs.Name] = groups[recv] + p
				}
			}
			return true
		})
	}

	// passed[function][argument index] lists the group prefixes handed in.
	passed := map[string]map[int][]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn string
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				fn = fun.Name
			case *ast.SelectorExpr:
				fn = fun.Sel.Name
			}
			for i, a := range call.Args {
				if id, ok := a.(*ast.Ident); ok {
					if prefix, ok := groups[id.Name]; ok {
						if passed[fn] == nil {
							passed[fn] = map[int][]string{}
						}
						passed[fn][i] = append(passed[fn][i], prefix)
					}
				}
			}
			return true
		})
	}

	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			params := map[string][]string{}
			i := 0
			for _, field := range fd.Type.Params.List {
				for _, name := range field.Names {
					if prefixes := passed[fd.Name.Name][i]; len(prefixes) > 0 {
						params[name.Name] = prefixes
					}
					i++
				}
				if len(field.Names) == 0 {
					i++
				}
			}
			// A group made inside the function from a group parameter
			// (`eod := g.Group("", ...)`) carries the parameter's prefixes.
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
					return true
				}
				lhs, ok := as.Lhs[0].(*ast.Ident)
				call, ok2 := as.Rhs[0].(*ast.CallExpr)
				if !ok || !ok2 || len(call.Args) == 0 {
					return true
				}
				recv, method, ok := selector(call)
				p, ok2 := stringLit(call.Args[0])
				if prefixes, known := params[recv]; ok && ok2 && known && method == "Group" {
					for _, prefix := range prefixes {
						params[lhs.Name] = append(params[lhs.Name], prefix+p)
					}
				}
				return true
			})
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				recv, method, ok := selector(call)
				if !ok || method != "GET" {
					return true
				}
				p, ok := stringLit(call.Args[0])
				if !ok {
					return true
				}
				if prefixes, ok := params[recv]; ok {
					for _, prefix := range prefixes {
						into[prefix+p] = true
					}
				} else {
					into[groups[recv]+p] = true
				}
				return true
			})
		}
	}
}

func selector(call *ast.CallExpr) (recv, method string, ok bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", sel.Sel.Name, true
	}
	return id.Name, sel.Sel.Name, true
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// Serves reports whether a request for path, or below it, reaches a GET
// route: "/v1/notes" is served by "/v1/notes" and "/v1/notes/:id".
func (s ServiceSource) Serves(path string) bool {
	for r := range s.GETRoutes {
		if r == path || strings.HasPrefix(r, path+"/") {
			return true
		}
	}
	return false
}
