package validate

import (
	batchv1 "k8s.io/api/batch/v1"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository root, seen from deploy/k8s/validate.
const repoRoot = "../../.."

// kustomizeBinary finds the pinned kustomize: $KUSTOMIZE, then the
// repository's .bin/kustomize (scripts/k8s-validate.sh installs it), then PATH.
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	if k := os.Getenv("KUSTOMIZE"); k != "" {
		return k
	}
	if k, err := filepath.Abs(filepath.Join(repoRoot, ".bin", "kustomize")); err == nil {
		if _, err := os.Stat(k); err == nil {
			return k
		}
	}
	if k, err := exec.LookPath("kustomize"); err == nil {
		return k
	}
	t.Fatal("kustomize not found: run scripts/k8s-validate.sh (installs the pinned version into .bin/) or set KUSTOMIZE")
	return ""
}

func overlays(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../overlays/*/kustomization.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under deploy/k8s/overlays (err %v)", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	sort.Strings(dirs)
	return dirs
}

func loadSources(t *testing.T) map[string]ServiceSource {
	t.Helper()
	sources := map[string]ServiceSource{}
	for name := range Services {
		src, err := LoadServiceSource(repoRoot, name)
		if err != nil {
			t.Fatalf("%v", err)
		}
		sources[name] = src
	}
	return sources
}

func newDecoder(t *testing.T) *Decoder {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return NewDecoder(scheme)
}

// renderOverlay builds the overlay in dir, decodes every object strictly
// and indexes them; it returns how many objects there are.
func renderOverlay(t *testing.T, kustomize string, dec *Decoder, dir string) (*Rendered, int) {
	t.Helper()
	out, err := Build(kustomize, dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := dec.DecodeAll(out)
	if err != nil {
		t.Fatalf("strict decoding:\n%v", err)
	}
	r, err := Index(objs)
	if err != nil {
		t.Fatal(err)
	}
	return r, len(objs)
}

// TestOverlays renders every overlay, decodes every object strictly and
// runs the semantic checks against the services' source.
func TestOverlays(t *testing.T) {
	kustomize := kustomizeBinary(t)
	sources := loadSources(t)
	dec := newDecoder(t)
	for _, dir := range overlays(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r, n := renderOverlay(t, kustomize, dec, dir)
			if len(r.Others) > 0 {
				t.Logf("not checked semantically: %v", r.Others)
			}
			if err := Check(r, sources); err != nil {
				t.Fatalf("semantic checks:\n%v", err)
			}
			t.Logf("%d objects decoded strictly and checked", n)
		})
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: x
          image: x
`

// TestStrictDecodingRejects proves the decoder is strict: the valid document
// decodes, and each broken variant fails.
func TestStrictDecodingRejects(t *testing.T) {
	dec := newDecoder(t)
	if _, err := dec.Decode([]byte(deployment)); err != nil {
		t.Fatalf("valid Deployment: %v", err)
	}
	cases := map[string]string{
		"unknown field":        strings.Replace(deployment, "  selector:", "  replicass: 2\n  selector:", 1),
		"unknown nested field": strings.Replace(deployment, "          image: x", "          image: x\n          readinessprobe: {}", 1),
		"wrong type":           strings.Replace(deployment, "  selector:", "  replicas: two\n  selector:", 1),
		"duplicate field":      strings.Replace(deployment, "          image: x", "          image: x\n          image: z", 1),
		"unknown kind":         strings.Replace(deployment, "kind: Deployment", "kind: Deploymant", 1),
		"gateway api unknown field": `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: x
spec:
  rules:
    - backendRef: {name: x, port: 80}
`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if obj, err := dec.Decode([]byte(doc)); err == nil {
				t.Fatalf("decoded %T without error:\n%s", obj, doc)
			} else {
				t.Logf("rejected: %v", err)
			}
		})
	}
}

// TestServiceSource guards what the checks read: the variables from the
// config source and the route tables the services' routers write.
func TestServiceSource(t *testing.T) {
	for name, src := range loadSources(t) {
		for _, route := range []string{"/healthz", "/readyz", "/metrics"} {
			if !src.HasInternal("GET", route) {
				t.Errorf("%s: no internal GET %s among %v", name, route, src.Routes)
			}
		}
		public := 0
		for _, r := range src.Routes {
			if r.Public {
				public++
			}
		}
		if public == 0 {
			t.Errorf("%s: no public route among %v", name, src.Routes)
		}
		if src.Env[src.Prefix+"TEST_DATABASE_URL"] {
			t.Errorf("%s: test-only variable read as service config", name)
		}
		t.Logf("%s: %d variables, %d routes (%d public)", name, len(src.Env), len(src.Routes), public)
	}
}

// TestReadRoutesRejects proves a malformed route table is an error, not a
// table with fewer routes.
func TestReadRoutesRejects(t *testing.T) {
	// No visibility, an unknown one, a relative path, no route at all.
	for _, body := range []string{"GET /v1/eod\n", "GET /v1/eod exposed\n", "GET v1/eod public\n", "# nothing\n"} {
		t.Run(body, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "svc.txt")
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if routes, err := ReadRoutes(path); err == nil {
				t.Fatalf("read %v without error", routes)
			}
		})
	}
}

// TestChecksCatchMistakes breaks a correctly rendered overlay in one place at
// a time and expects the semantic checks to name the mistake.
func TestChecksCatchMistakes(t *testing.T) {
	kustomize := kustomizeBinary(t)
	sources := loadSources(t)
	dec := newDecoder(t)
	out, err := Build(kustomize, overlays(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	render := func(t *testing.T) *Rendered {
		t.Helper()
		objs, err := dec.DecodeAll(out)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Index(objs)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name   string
		mutate func(r *Rendered)
		want   string
	}{
		{"unknown env var", func(r *Rendered) {
			r.Deployments[0].Spec.Template.Spec.Containers[0].Env[0].Name += "X"
		}, "does not read"},
		{"probe path", func(r *Rendered) {
			r.Deployments[0].Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "/ready"
		}, "readinessProbe path"},
		{"selector", func(r *Rendered) {
			r.Deployments[0].Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "other"
		}, "does not match template labels"},
		{"deployment of no known service", func(r *Rendered) {
			r.Deployments[0].Spec.Template.Labels[nameLabel] = "nothing"
		}, `template label app.kubernetes.io/name="nothing" names no known service`},
		{"job of no known service", func(r *Rendered) {
			r.Jobs[0].Spec.Template.Labels[nameLabel] = "nothing"
		}, `template label app.kubernetes.io/name="nothing" names no known service`},
		{"grace period", func(r *Rendered) {
			grace := int64(20)
			r.Deployments[0].Spec.Template.Spec.TerminationGracePeriodSeconds = &grace
		}, "must exceed drain"},
		{"writable root", func(r *Rendered) {
			ro := false
			r.Deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = &ro
		}, "readOnlyRootFilesystem"},
		{"route to wrong service", func(r *Rendered) {
			for _, ing := range r.Ingresses {
				ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "marketdata-svc"
			}
			for _, hr := range r.HTTPRoutes {
				hr.Spec.Rules[0].BackendRefs[0].Name = "marketdata-svc"
			}
		}, "want notes-svc"},
		{"public route missing from the HTTPRoute", func(r *Rendered) {
			for _, hr := range r.HTTPRoutes {
				for i := range hr.Spec.Rules {
					rule := &hr.Spec.Rules[i]
					rule.Matches = slices.DeleteFunc(rule.Matches, func(m gatewayv1.HTTPRouteMatch) bool { return *m.Path.Value == "/v1/intraday" })
				}
			}
			for _, ing := range r.Ingresses {
				ing.Spec.Rules[0].HTTP.Paths = slices.DeleteFunc(ing.Spec.Rules[0].HTTP.Paths, func(p networkingv1.HTTPIngressPath) bool { return p.Path == "/v1/intraday" })
			}
		}, "public route GET /v1/intraday of marketdata-svc is not routed"},
		{"gateway path with no route", func(r *Rendered) {
			addPath(r, "/v1/news", "marketdata-svc")
		}, "/v1/news goes to marketdata-svc, which serves no public route"},
		{"internal route exposed", func(r *Rendered) {
			addPath(r, "/metrics", "notes-svc")
		}, "/metrics goes to notes-svc, which serves no public route"},
		{"admin port routed by the gateway", func(r *Rendered) {
			for _, ing := range r.Ingresses {
				b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
				b.Name, b.Port.Number = "notes-svc-admin", 9090
			}
			for _, hr := range r.HTTPRoutes {
				port := gatewayv1.PortNumber(9090)
				hr.Spec.Rules[0].BackendRefs[0].Name, hr.Spec.Rules[0].BackendRefs[0].Port = "notes-svc-admin", &port
			}
		}, "the gateway never exposes it"},
		{"admin port on the gateway's Service", func(r *Rendered) {
			for _, svc := range r.Services {
				if svc.Name == "notes-svc" {
					svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "admin", Port: 9090, TargetPort: intstr.FromString("admin")})
				}
			}
		}, "exposes the admin port beside others"},
		{"admin tokens from an undocumented Secret", func(r *Rendered) {
			for _, v := range r.Deployments[0].Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					v.Secret.SecretName = "admin-tokens"
				}
			}
		}, "Secret admin-tokens is not among the documented Secrets"},
		{"service target port", func(r *Rendered) {
			r.Services[0].Spec.Ports[0].TargetPort = intstr.FromString("web")
		}, "targetPort web"},
		{"migration config not pre-rollout", func(r *Rendered) {
			for _, cm := range r.ConfigMaps {
				delete(cm.Labels, PhaseLabel)
			}
		}, "lacks label"},
		{"trust everyone", func(r *Rendered) {
			for name, cm := range r.ConfigMaps {
				if strings.HasPrefix(name, TrustedProxiesConfigMap) {
					cm.Data[TrustedProxiesKey] = "0.0.0.0/0"
				}
			}
		}, "every address"},
		{"monitor selects no service", func(r *Rendered) {
			r.ServiceMonitors[0].Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "nothing"
		}, "matches 0 Services"},
		{"monitor port name", func(r *Rendered) {
			r.ServiceMonitors[0].Spec.Endpoints[0].Port = "metrics"
		}, `endpoint port "metrics"`},
		{"monitor path", func(r *Rendered) {
			r.ServiceMonitors[0].Spec.Endpoints[0].Path = "/prometheus"
		}, "serves no /prometheus"},
		{"service not scraped", func(r *Rendered) {
			r.ServiceMonitors = r.ServiceMonitors[1:]
		}, "scraped by 0 monitor endpoints"},
		{"scrape blocked", func(r *Rendered) {
			for _, np := range r.NetworkPolicies {
				if len(np.Spec.Ingress) > 0 { // the sync pods' policy admits nothing
					np.Spec.Ingress[0].From = np.Spec.Ingress[0].From[:1]
				}
			}
		}, "does not admit namespace monitoring"},
		{"sync runs may overlap", func(r *Rendered) {
			r.CronJobs[0].Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
		}, "concurrencyPolicy \"Allow\", want Forbid"},
		{"sync token variable unread", func(r *Rendered) {
			ctr := &r.CronJobs[0].Spec.JobTemplate.Spec.Template.Spec.Containers[0]
			ctr.Env[len(ctr.Env)-1].Name = "MARKETDATA_EODHD_TOKEN"
		}, "sets MARKETDATA_EODHD_TOKEN, which marketdata-svc does not read"},
		{"sync without limits", func(r *Rendered) {
			r.CronJobs[0].Spec.JobTemplate.Spec.Template.Spec.Containers[0].Resources.Limits = nil
		}, "CronJob marketdata-sync container sync: no cpu limit"},
		{"cronjob runs another command", func(r *Rendered) {
			r.CronJobs[0].Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args = []string{"serve"}
		}, "want the sync command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t)
			if err := Check(r, sources); err != nil {
				t.Fatalf("unbroken overlay fails: %v", err)
			}
			tc.mutate(r)
			err := Check(r, sources)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// addPath routes path to svc in every HTTPRoute and Ingress, beside the
// paths already routed there.
func addPath(r *Rendered, path, svc string) {
	for _, hr := range r.HTTPRoutes {
		for i := range hr.Spec.Rules {
			if rule := &hr.Spec.Rules[i]; string(rule.BackendRefs[0].Name) == svc {
				m := rule.Matches[0]
				m.Path = &gatewayv1.HTTPPathMatch{Type: m.Path.Type, Value: &path}
				rule.Matches = append(rule.Matches, m)
			}
		}
	}
	for _, ing := range r.Ingresses {
		for _, p := range ing.Spec.Rules[0].HTTP.Paths {
			if p.Backend.Service.Name == svc {
				p.Path = path
				ing.Spec.Rules[0].HTTP.Paths = append(ing.Spec.Rules[0].HTTP.Paths, p)
				break
			}
		}
	}
}

// TestNewPublicRouteMustBeRouted adds a public route to a service's route
// table, as make routes does for a new endpoint, and expects every
// HTTPRoute and Ingress of every overlay to fail until its path is routed.
func TestNewPublicRouteMustBeRouted(t *testing.T) {
	kustomize := kustomizeBinary(t)
	dec := newDecoder(t)
	for _, dir := range overlays(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r, _ := renderOverlay(t, kustomize, dec, dir)
			sources := loadSources(t)
			md := sources["marketdata-svc"]
			md.Routes = append(slices.Clone(md.Routes), Route{Method: "GET", Path: "/v1/news/:id", Public: true})
			sources["marketdata-svc"] = md
			err := Check(r, sources)
			const want = ": public route GET /v1/news/:id of marketdata-svc is not routed"
			if n := len(r.HTTPRoutes) + len(r.Ingresses); err == nil || strings.Count(err.Error(), want) != n {
				t.Fatalf("got %v, want %d errors containing %q", err, n, want)
			}
			addPath(r, "/v1/news", "marketdata-svc")
			if err := Check(r, sources); err != nil {
				t.Fatalf("routed, still fails: %v", err)
			}
		})
	}
}

// TestComposeEnv checks that every variable deploy/compose/compose.yaml
// gives a service is one the service reads.
func TestComposeEnv(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "compose", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	sources := loadSources(t)
	blocks := map[string]string{"x-notes-env": "notes-svc", "x-marketdata-env": "marketdata-svc"}
	for block, svc := range blocks {
		env, ok := doc[block].(map[string]any)
		if !ok || len(env) == 0 {
			t.Fatalf("compose.yaml: no %s block", block)
		}
		for name := range env {
			if !sources[svc].Env[name] {
				t.Errorf("compose.yaml %s: %s is not read by %s", block, name, svc)
			}
		}
	}
}
