package validate

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// RuntimeEnv lists variables read by the Go runtime rather than the
// services' config packages; manifests may set them too.
var RuntimeEnv = map[string]bool{"GOMEMLIMIT": true, "GOMAXPROCS": true, "GOGC": true, "GODEBUG": true}

// Secrets lists the Secrets the manifests reference and their keys; they are
// created outside the manifests (deploy/README.md says how).
var Secrets = map[string][]string{
	"notes-svc-secrets":      {"DATABASE_URL", "WEBHOOK_SECRET_KEY"},
	"marketdata-svc-secrets": {"DATABASE_URL", "REDIS_URL"},
	// The data providers' credentials of marketdata-svc sync (CronJob).
	"marketdata-sync-secrets": {"MARKETSTACK_TOKEN", "TIINGO_TOKEN", "EODHD_TOKEN"},
	// The admin API's token files (name:token a line), mounted as volumes.
	"notes-svc-admin-tokens":      {"tokens"},
	"marketdata-svc-admin-tokens": {"tokens"},
}

// AdminPort names the container port of the admin API, which no gateway
// may route to.
const AdminPort = "admin"

// TrustedProxiesConfigMap and TrustedProxiesKey hold the per-overlay list of
// gateway addresses the services trust for X-Forwarded-For.
const (
	TrustedProxiesConfigMap = "tickerdesk-gateway"
	TrustedProxiesKey       = "trusted-proxies"
)

// nameLabel identifies the service a workload runs.
const nameLabel = "app.kubernetes.io/name"

// PhaseLabel marks what `kubectl apply -l tickerdesk.io/phase=pre-rollout`
// applies before a rollout: the migration Jobs and everything they need.
const PhaseLabel, PreRollout = "tickerdesk.io/phase", "pre-rollout"

// Rendered is one overlay's objects, indexed for the checks.
type Rendered struct {
	Deployments     []*appsv1.Deployment
	Jobs            []*batchv1.Job
	CronJobs        []*batchv1.CronJob
	Services        []*corev1.Service
	ServiceAccounts map[string]*corev1.ServiceAccount
	ConfigMaps      map[string]*corev1.ConfigMap
	HPAs            []*autoscalingv2.HorizontalPodAutoscaler
	PDBs            []*policyv1.PodDisruptionBudget
	NetworkPolicies []*networkingv1.NetworkPolicy
	Ingresses       []*networkingv1.Ingress
	Gateways        map[string]*gatewayv1.Gateway
	HTTPRoutes      []*gatewayv1.HTTPRoute
	ServiceMonitors []*monitoringv1.ServiceMonitor
	PodMonitors     []*monitoringv1.PodMonitor
	PrometheusRules []*monitoringv1.PrometheusRule
	Others          []string
}

// Index sorts decoded objects by kind. Kinds the checks do not know are
// listed in Others (a Secret is an error: Secrets stay out of manifests).
func Index(objs []Object) (*Rendered, error) {
	r := &Rendered{
		ServiceAccounts: map[string]*corev1.ServiceAccount{},
		ConfigMaps:      map[string]*corev1.ConfigMap{},
		Gateways:        map[string]*gatewayv1.Gateway{},
	}
	var errs []error
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			r.Deployments = append(r.Deployments, v)
		case *batchv1.Job:
			r.Jobs = append(r.Jobs, v)
		case *batchv1.CronJob:
			r.CronJobs = append(r.CronJobs, v)
		case *corev1.Service:
			r.Services = append(r.Services, v)
		case *corev1.ServiceAccount:
			r.ServiceAccounts[v.Name] = v
		case *corev1.ConfigMap:
			r.ConfigMaps[v.Name] = v
		case *autoscalingv2.HorizontalPodAutoscaler:
			r.HPAs = append(r.HPAs, v)
		case *policyv1.PodDisruptionBudget:
			r.PDBs = append(r.PDBs, v)
		case *networkingv1.NetworkPolicy:
			r.NetworkPolicies = append(r.NetworkPolicies, v)
		case *networkingv1.Ingress:
			r.Ingresses = append(r.Ingresses, v)
		case *gatewayv1.Gateway:
			r.Gateways[v.Name] = v
		case *gatewayv1.HTTPRoute:
			r.HTTPRoutes = append(r.HTTPRoutes, v)
		case *monitoringv1.ServiceMonitor:
			r.ServiceMonitors = append(r.ServiceMonitors, v)
		case *monitoringv1.PodMonitor:
			r.PodMonitors = append(r.PodMonitors, v)
		case *monitoringv1.PrometheusRule:
			r.PrometheusRules = append(r.PrometheusRules, v)
		case *corev1.Secret:
			errs = append(errs, fmt.Errorf("rendered Secret %s: Secrets are created outside the manifests", v.Name))
		default:
			r.Others = append(r.Others, fmt.Sprintf("%T", v))
		}
	}
	return r, errors.Join(errs...)
}

// checker accumulates failures with a context prefix.
type checker struct {
	errs []error
}

func (c *checker) failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// Check runs every semantic check on one overlay against the services'
// source and returns all failures.
func Check(r *Rendered, sources map[string]ServiceSource) error {
	c := &checker{}
	c.workloads(r, sources)
	c.services(r)
	c.autoscaling(r)
	c.networkPolicies(r)
	c.routing(r, sources)
	c.trustedProxies(r)
	c.monitors(r, sources)
	return errors.Join(c.errs...)
}

func (c *checker) workloads(r *Rendered, sources map[string]ServiceSource) {
	seen := map[string]bool{}
	for _, d := range r.Deployments {
		where := "Deployment " + d.Name
		src, ok := c.serviceOf(where, d.Spec.Template.Labels, sources)
		if !ok {
			continue
		}
		seen[src.Name] = true
		if d.Spec.Selector == nil {
			c.failf("%s: no selector", where)
		} else if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			c.failf("%s: selector %v does not match template labels %v", where, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
		}
		c.podSpec(where, &d.Spec.Template.Spec, src, r)
		c.probesAndPorts(where, &d.Spec.Template.Spec, src, r)
	}
	for _, j := range r.Jobs {
		where := "Job " + j.Name
		src, ok := c.serviceOf(where, j.Spec.Template.Labels, sources)
		if !ok {
			continue
		}
		c.podSpec(where, &j.Spec.Template.Spec, src, r)
		c.preRollout(where, j, r)
		if args := j.Spec.Template.Spec.Containers[0].Args; len(args) == 0 || args[0] != "migrate" {
			c.failf("%s: runs %v, want the migrate command", where, args)
		}
	}
	// A CronJob runs a service's command on a schedule (marketdata-svc
	// sync): its pods are held to the same pod rules, and two runs never
	// overlap, since a run that outlives its period would race the next.
	for _, cj := range r.CronJobs {
		where := "CronJob " + cj.Name
		tmpl := cj.Spec.JobTemplate.Spec.Template
		src, ok := c.serviceOf(where, tmpl.Labels, sources)
		if !ok {
			continue
		}
		c.podSpec(where, &tmpl.Spec, src, r)
		if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
			c.failf("%s: concurrencyPolicy %q, want Forbid", where, cj.Spec.ConcurrencyPolicy)
		}
		if len(tmpl.Spec.Containers) > 0 {
			if args := tmpl.Spec.Containers[0].Args; len(args) == 0 || args[0] != "sync" {
				c.failf("%s: runs %v, want the sync command", where, args)
			}
		}
	}
	for name := range sources {
		if !seen[name] {
			c.failf("no Deployment runs %s", name)
		}
	}
}

// serviceOf returns the service a pod template runs, named by its
// nameLabel; a template naming none of sources fails the check.
func (c *checker) serviceOf(where string, templateLabels map[string]string, sources map[string]ServiceSource) (ServiceSource, bool) {
	src, ok := sources[templateLabels[nameLabel]]
	if !ok {
		c.failf("%s: template label %s=%q names no known service", where, nameLabel, templateLabels[nameLabel])
	}
	return src, ok
}

// preRollout checks that a migration Job and every object it needs carry
// the pre-rollout label, so applying that label alone runs the migrations.
func (c *checker) preRollout(where string, j *batchv1.Job, r *Rendered) {
	if j.Labels[PhaseLabel] != PreRollout {
		c.failf("%s: label %s=%s missing", where, PhaseLabel, PreRollout)
	}
	spec := j.Spec.Template.Spec
	if sa, ok := r.ServiceAccounts[spec.ServiceAccountName]; ok && sa.Labels[PhaseLabel] != PreRollout {
		c.failf("%s: its ServiceAccount %s lacks label %s=%s", where, sa.Name, PhaseLabel, PreRollout)
	}
	for _, ctr := range spec.Containers {
		var names []string
		for _, ef := range ctr.EnvFrom {
			if ef.ConfigMapRef != nil {
				names = append(names, ef.ConfigMapRef.Name)
			}
		}
		for _, e := range ctr.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				names = append(names, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
		for _, n := range names {
			if cm, ok := r.ConfigMaps[n]; ok && cm.Labels[PhaseLabel] != PreRollout {
				c.failf("%s: its ConfigMap %s lacks label %s=%s", where, n, PhaseLabel, PreRollout)
			}
		}
	}
}

// podSpec checks hardening, resources, images and every environment variable
// of a pod template.
func (c *checker) podSpec(where string, spec *corev1.PodSpec, src ServiceSource, r *Rendered) {
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		c.failf("%s: automountServiceAccountToken must be false", where)
	}
	if sa, ok := r.ServiceAccounts[spec.ServiceAccountName]; !ok {
		c.failf("%s: ServiceAccount %q is not rendered", where, spec.ServiceAccountName)
	} else if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		c.failf("%s: ServiceAccount %s must set automountServiceAccountToken: false", where, sa.Name)
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		c.failf("%s: pod securityContext.runAsNonRoot must be true", where)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.failf("%s: pod seccompProfile must be RuntimeDefault", where)
	}
	if len(spec.Containers) == 0 {
		c.failf("%s: no containers", where)
		return
	}
	for _, ctr := range spec.Containers {
		cw := where + " container " + ctr.Name
		if !strings.Contains(ctr.Image, "/"+src.Name+":") && !strings.Contains(ctr.Image, "/"+src.Name+"@") {
			c.failf("%s: image %q is not a %s image", cw, ctr.Image, src.Name)
		}
		sc := ctr.SecurityContext
		switch {
		case sc == nil:
			c.failf("%s: no securityContext", cw)
		default:
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				c.failf("%s: readOnlyRootFilesystem must be true", cw)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				c.failf("%s: allowPrivilegeEscalation must be false", cw)
			}
			if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				c.failf("%s: capabilities must drop ALL", cw)
			}
			if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
				c.failf("%s: adds capabilities %v", cw, sc.Capabilities.Add)
			}
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := ctr.Resources.Requests[res]; !ok {
				c.failf("%s: no %s request", cw, res)
			}
			if _, ok := ctr.Resources.Limits[res]; !ok {
				c.failf("%s: no %s limit", cw, res)
			}
		}
		c.env(cw, ctr, src, r)
	}
	for _, v := range spec.Volumes {
		if v.Secret == nil {
			continue
		}
		keys, ok := Secrets[v.Secret.SecretName]
		if !ok {
			c.failf("%s: volume %s: Secret %s is not among the documented Secrets %v", where, v.Name, v.Secret.SecretName, Secrets)
		}
		for _, it := range v.Secret.Items {
			if !slices.Contains(keys, it.Key) {
				c.failf("%s: volume %s: Secret %s key %s is not among the documented Secrets %v", where, v.Name, v.Secret.SecretName, it.Key, Secrets)
			}
		}
	}
}

// env checks that every variable a container gets is one the service reads,
// and that every ConfigMap and Secret reference resolves.
func (c *checker) env(where string, ctr corev1.Container, src ServiceSource, r *Rendered) {
	known := func(name, from string) {
		if !src.Env[name] && !RuntimeEnv[name] {
			c.failf("%s: %s sets %s, which %s does not read (its config reads %v)", where, from, name, src.Name, slices.Sorted(maps.Keys(src.Env)))
		}
	}
	for _, ef := range ctr.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, ok := r.ConfigMaps[ef.ConfigMapRef.Name]
			if !ok {
				c.failf("%s: envFrom ConfigMap %q is not rendered", where, ef.ConfigMapRef.Name)
				continue
			}
			for k := range cm.Data {
				known(ef.Prefix+k, "ConfigMap "+cm.Name)
			}
		default:
			c.failf("%s: envFrom other than a ConfigMap (Secrets are referenced key by key)", where)
		}
	}
	for _, e := range ctr.Env {
		known(e.Name, "env")
		if e.ValueFrom == nil {
			continue
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			cm, ok := r.ConfigMaps[ref.Name]
			if !ok {
				c.failf("%s: %s: ConfigMap %q is not rendered", where, e.Name, ref.Name)
			} else if _, ok := cm.Data[ref.Key]; !ok {
				c.failf("%s: %s: ConfigMap %s has no key %q", where, e.Name, ref.Name, ref.Key)
			}
		}
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			keys, ok := Secrets[ref.Name]
			if !ok || !slices.Contains(keys, ref.Key) {
				c.failf("%s: %s: Secret %s key %s is not among the documented Secrets %v", where, e.Name, ref.Name, ref.Key, Secrets)
			}
		}
	}
}

// effectiveEnv resolves the literal and ConfigMap-sourced values of a
// container's environment (Secrets are not resolved).
func effectiveEnv(ctr corev1.Container, r *Rendered) map[string]string {
	vals := map[string]string{}
	for _, ef := range ctr.EnvFrom {
		if ef.ConfigMapRef != nil {
			for k, v := range r.ConfigMaps[ef.ConfigMapRef.Name].Data {
				vals[ef.Prefix+k] = v
			}
		}
	}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			vals[e.Name] = e.Value
		case e.ValueFrom.ConfigMapKeyRef != nil:
			if cm, ok := r.ConfigMaps[e.ValueFrom.ConfigMapKeyRef.Name]; ok {
				vals[e.Name] = cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
			}
		}
	}
	return vals
}

// probesAndPorts checks that the container port is the one the service
// listens on, that each probe hits a route the service has on a declared
// port, and that the grace period outlasts drain plus shutdown timeout.
func (c *checker) probesAndPorts(where string, spec *corev1.PodSpec, src ServiceSource, r *Rendered) {
	ctr := spec.Containers[0]
	env := effectiveEnv(ctr, r)

	addr, ok := env[src.Prefix+"HTTP_ADDR"]
	if !ok {
		c.failf("%s: %sHTTP_ADDR is not set: the container port must not rely on a default", where, src.Prefix)
	} else {
		_, portStr, err := net.SplitHostPort(addr)
		port, err2 := strconv.Atoi(portStr)
		if err != nil || err2 != nil {
			c.failf("%s: %sHTTP_ADDR=%q is not host:port", where, src.Prefix, addr)
		} else if len(ctr.Ports) == 0 || int(ctr.Ports[0].ContainerPort) != port {
			c.failf("%s: container ports %v do not start with %d from %sHTTP_ADDR", where, ctr.Ports, port, src.Prefix)
		}
	}

	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"startupProbe", ctr.StartupProbe, "/healthz"},
		{"livenessProbe", ctr.LivenessProbe, "/healthz"},
		{"readinessProbe", ctr.ReadinessProbe, "/readyz"},
	}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil {
			c.failf("%s: %s must be an httpGet probe", where, p.name)
			continue
		}
		get := p.probe.HTTPGet
		if get.Path != p.path {
			c.failf("%s: %s path %q, want %s", where, p.name, get.Path, p.path)
		}
		if !src.HasInternal("GET", get.Path) {
			c.failf("%s: %s path %q is not an internal GET route of %s (%s/%s.txt)", where, p.name, get.Path, src.Name, RoutesDir, src.Name)
		}
		if !hasPort(ctr.Ports, get.Port) {
			c.failf("%s: %s port %s is not a container port", where, p.name, get.Port.String())
		}
	}

	drain, err1 := time.ParseDuration(env[src.Prefix+"SHUTDOWN_DRAIN"])
	timeout, err2 := time.ParseDuration(env[src.Prefix+"SHUTDOWN_TIMEOUT"])
	switch {
	case err1 != nil || err2 != nil:
		c.failf("%s: %sSHUTDOWN_DRAIN and %sSHUTDOWN_TIMEOUT must be set to durations (got %q, %q)", where, src.Prefix, src.Prefix, env[src.Prefix+"SHUTDOWN_DRAIN"], env[src.Prefix+"SHUTDOWN_TIMEOUT"])
	case spec.TerminationGracePeriodSeconds == nil:
		c.failf("%s: terminationGracePeriodSeconds is not set", where)
	case time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second <= drain+timeout:
		c.failf("%s: terminationGracePeriodSeconds %d must exceed drain %s + shutdown timeout %s", where, *spec.TerminationGracePeriodSeconds, drain, timeout)
	}
}

func hasPort(ports []corev1.ContainerPort, p intstr.IntOrString) bool {
	for _, cp := range ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return true
		}
	}
	return false
}

// selects returns the Deployments whose pod template sel matches.
func selects(r *Rendered, sel labels.Selector) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, d := range r.Deployments {
		if !sel.Empty() && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	return out
}

// selectsCronJob tells whether sel selects the pods of a CronJob.
func selectsCronJob(r *Rendered, sel labels.Selector) bool {
	for _, cj := range r.CronJobs {
		if !sel.Empty() && sel.Matches(labels.Set(cj.Spec.JobTemplate.Spec.Template.Labels)) {
			return true
		}
	}
	return false
}

func (c *checker) services(r *Rendered) {
	for _, s := range r.Services {
		where := "Service " + s.Name
		ds := selects(r, labels.SelectorFromSet(s.Spec.Selector))
		if len(ds) != 1 {
			c.failf("%s: selector %v matches %d Deployments, want 1", where, s.Spec.Selector, len(ds))
			continue
		}
		admin := 0
		for _, p := range s.Spec.Ports {
			if !hasPort(ds[0].Spec.Template.Spec.Containers[0].Ports, p.TargetPort) {
				c.failf("%s: targetPort %s is not a port of Deployment %s", where, p.TargetPort.String(), ds[0].Name)
			}
			if p.TargetPort.String() == AdminPort {
				admin++
			}
		}
		// The admin port has a Service of its own, so the Service the
		// gateway routes to never exposes it.
		if admin > 0 && admin != len(s.Spec.Ports) {
			c.failf("%s: exposes the admin port beside others: give it a Service of its own", where)
		}
	}
}

func (c *checker) autoscaling(r *Rendered) {
	deployments := map[string]bool{}
	for _, d := range r.Deployments {
		deployments[d.Name] = true
	}
	hpas := map[string]bool{}
	for _, h := range r.HPAs {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || !deployments[ref.Name] {
			c.failf("HorizontalPodAutoscaler %s: target %s/%s is not a rendered Deployment", h.Name, ref.Kind, ref.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			c.failf("HorizontalPodAutoscaler %s: replicas must satisfy 1 <= min <= max", h.Name)
		}
		hpas[ref.Name] = true
	}
	pdbs := map[string]bool{}
	for _, p := range r.PDBs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		ds := []*appsv1.Deployment(nil)
		if err == nil {
			ds = selects(r, sel)
		}
		if len(ds) != 1 {
			c.failf("PodDisruptionBudget %s: selector matches %d Deployments, want 1", p.Name, len(ds))
			continue
		}
		pdbs[ds[0].Name] = true
	}
	for _, d := range r.Deployments {
		if !hpas[d.Name] {
			c.failf("Deployment %s: no HorizontalPodAutoscaler", d.Name)
		}
		if !pdbs[d.Name] {
			c.failf("Deployment %s: no PodDisruptionBudget", d.Name)
		}
		if d.Spec.Replicas != nil {
			c.failf("Deployment %s: sets replicas, which fights its HorizontalPodAutoscaler", d.Name)
		}
	}
}

func (c *checker) networkPolicies(r *Rendered) {
	covered := map[string]bool{}
	for _, np := range r.NetworkPolicies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			c.failf("NetworkPolicy %s: %v", np.Name, err)
			continue
		}
		ds := selects(r, sel)
		if len(ds) == 0 && !selectsCronJob(r, sel) {
			c.failf("NetworkPolicy %s: selects no Deployment or CronJob", np.Name)
		}
		for _, d := range ds {
			covered[d.Name] = true
			for _, rule := range np.Spec.Ingress {
				for _, p := range rule.Ports {
					if p.Port != nil && !hasPort(d.Spec.Template.Spec.Containers[0].Ports, *p.Port) {
						c.failf("NetworkPolicy %s: ingress port %s is not a port of %s", np.Name, p.Port.String(), d.Name)
					}
				}
			}
		}
	}
	for _, d := range r.Deployments {
		if !covered[d.Name] {
			c.failf("Deployment %s: no NetworkPolicy", d.Name)
		}
	}
}

// routing checks that the HTTPRoutes and Ingresses send every public route
// of the services, and nothing else, to the right Service on a port that
// Service exposes (checkPaths).
func (c *checker) routing(r *Rendered, sources map[string]ServiceSource) {
	if len(r.HTTPRoutes) == 0 && len(r.Ingresses) == 0 {
		c.failf("no HTTPRoute or Ingress: the services are unreachable from the gateway")
	}
	services := map[string]*corev1.Service{}
	for _, s := range r.Services {
		services[s.Name] = s
	}
	backend := func(where, svc string, port int32) {
		s, ok := services[svc]
		if !ok {
			c.failf("%s: backend Service %q is not rendered", where, svc)
			return
		}
		for _, p := range s.Spec.Ports {
			if p.Port == port {
				if p.Name == AdminPort || p.TargetPort.String() == AdminPort {
					c.failf("%s: routes Service %s port %d, the admin API: the gateway never exposes it", where, svc, port)
				}
				return
			}
		}
		c.failf("%s: Service %s has no port %d", where, svc, port)
	}

	for _, hr := range r.HTTPRoutes {
		where := "HTTPRoute " + hr.Name
		for _, ref := range hr.Spec.ParentRefs {
			gw, ok := r.Gateways[string(ref.Name)]
			if !ok {
				c.failf("%s: parent Gateway %q is not rendered", where, ref.Name)
				continue
			}
			if ref.SectionName != nil && !hasListener(gw, string(*ref.SectionName)) {
				c.failf("%s: Gateway %s has no listener %q", where, gw.Name, *ref.SectionName)
			}
		}
		var got []GatewayPath
		for _, rule := range hr.Spec.Rules {
			if len(rule.BackendRefs) != 1 {
				c.failf("%s: a rule has %d backends, want 1", where, len(rule.BackendRefs))
				continue
			}
			b := rule.BackendRefs[0]
			if b.Port == nil {
				c.failf("%s: backend %s has no port", where, b.Name)
				continue
			}
			backend(where, string(b.Name), int32(*b.Port))
			for _, m := range rule.Matches {
				if m.Path == nil || m.Path.Value == nil || m.Path.Type == nil || *m.Path.Type != gatewayv1.PathMatchPathPrefix {
					c.failf("%s: every match must be a PathPrefix", where)
					continue
				}
				got = append(got, GatewayPath{Path: *m.Path.Value, Match: Prefix, Service: string(b.Name)})
			}
		}
		c.checkPaths(where, got, sources)
	}

	for _, ing := range r.Ingresses {
		where := "Ingress " + ing.Name
		var got []GatewayPath
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				if p.PathType == nil || *p.PathType != networkingv1.PathTypePrefix {
					c.failf("%s: path %s must have pathType Prefix", where, p.Path)
				}
				if p.Backend.Service == nil {
					c.failf("%s: path %s has no Service backend", where, p.Path)
					continue
				}
				backend(where, p.Backend.Service.Name, p.Backend.Service.Port.Number)
				got = append(got, GatewayPath{Path: p.Path, Match: Prefix, Service: p.Backend.Service.Name})
			}
		}
		c.checkPaths(where, got, sources)
	}
}

func hasListener(gw *gatewayv1.Gateway, name string) bool {
	for _, l := range gw.Spec.Listeners {
		if string(l.Name) == name {
			return true
		}
	}
	return false
}

// trustedProxies checks the per-overlay trusted proxy list: present, not
// empty behind a gateway, each entry an IP or CIDR, and none trusting the
// whole Internet.
func (c *checker) trustedProxies(r *Rendered) {
	var cm *corev1.ConfigMap
	for name, m := range r.ConfigMaps {
		// kustomize's generator appends a content hash to the name.
		if name == TrustedProxiesConfigMap || strings.HasPrefix(name, TrustedProxiesConfigMap+"-") {
			cm = m
		}
	}
	if cm == nil {
		c.failf("ConfigMap %s is not rendered", TrustedProxiesConfigMap)
		return
	}
	raw := strings.TrimSpace(cm.Data[TrustedProxiesKey])
	if raw == "" {
		c.failf("ConfigMap %s: %s is empty, but the services sit behind a gateway", cm.Name, TrustedProxiesKey)
		return
	}
	for _, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		if p, err := netip.ParsePrefix(item); err == nil {
			if p.Bits() == 0 {
				c.failf("ConfigMap %s: %s trusts %s, every address", cm.Name, TrustedProxiesKey, item)
			}
			continue
		}
		if _, err := netip.ParseAddr(item); err != nil {
			c.failf("ConfigMap %s: %s entry %q is neither an IP nor a CIDR", cm.Name, TrustedProxiesKey, item)
		}
	}
}
