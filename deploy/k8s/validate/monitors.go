package validate

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MonitoringNamespace is where Prometheus runs: the NetworkPolicies must
// admit it on the port a monitor scrapes.
const MonitoringNamespace = "monitoring"

// monitors checks that every service's Deployment is scraped by exactly one
// ServiceMonitor or PodMonitor, that each monitor selects a Service (or
// pods) whose port it names, on a path the service serves, and that the
// scrape is let through the Deployment's NetworkPolicy.
func (c *checker) monitors(r *Rendered, sources map[string]ServiceSource) {
	scraped := map[string]int{}
	for _, m := range r.ServiceMonitors {
		where := "ServiceMonitor " + m.Name
		sel, ok := c.monitorSelector(where, &m.Spec.Selector)
		if !ok {
			continue
		}
		var matched int
		for _, s := range r.Services {
			if !sel.Matches(labels.Set(s.Labels)) {
				continue
			}
			matched++
			ds := selects(r, labels.SelectorFromSet(s.Spec.Selector))
			for _, e := range m.Spec.Endpoints {
				i := slices.IndexFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == e.Port })
				if e.Port == "" || i < 0 {
					c.failf("%s: endpoint port %q is not a named port of Service %s", where, e.Port, s.Name)
					continue
				}
				for _, d := range ds {
					scraped[d.Name]++
					c.scrape(where, d, s.Spec.Ports[i].TargetPort, e.Path, r, sources)
				}
			}
		}
		if matched != 1 {
			c.failf("%s: selector %v matches %d Services, want 1", where, m.Spec.Selector.MatchLabels, matched)
		}
	}
	for _, m := range r.PodMonitors {
		where := "PodMonitor " + m.Name
		sel, ok := c.monitorSelector(where, &m.Spec.Selector)
		if !ok {
			continue
		}
		ds := selects(r, sel)
		if len(ds) != 1 {
			c.failf("%s: selector %v matches %d Deployments, want 1", where, m.Spec.Selector.MatchLabels, len(ds))
			continue
		}
		for _, e := range m.Spec.PodMetricsEndpoints {
			if e.Port == nil || *e.Port == "" {
				c.failf("%s: every endpoint needs a named port", where)
				continue
			}
			scraped[ds[0].Name]++
			c.scrape(where, ds[0], intstr.FromString(*e.Port), e.Path, r, sources)
		}
	}
	for _, d := range r.Deployments {
		if _, ok := Services[d.Labels[nameLabel]]; ok && scraped[d.Name] != 1 {
			c.failf("Deployment %s: scraped by %d monitor endpoints, want 1", d.Name, scraped[d.Name])
		}
	}
}

// monitorSelector parses a monitor's selector; an empty one would scrape
// every Service or pod of the namespace.
func (c *checker) monitorSelector(where string, s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil || sel.Empty() {
		c.failf("%s: selector %v is empty or invalid (%v)", where, *s, err)
		return nil, false
	}
	return sel, true
}

// scrape checks one monitor endpoint against the Deployment it reaches.
func (c *checker) scrape(where string, d *appsv1.Deployment, port intstr.IntOrString, path string, r *Rendered, sources map[string]ServiceSource) {
	if !hasPort(d.Spec.Template.Spec.Containers[0].Ports, port) {
		c.failf("%s: port %s is not a port of Deployment %s", where, port.String(), d.Name)
	}
	if path == "" {
		path = "/metrics"
	}
	if src, ok := sources[d.Labels[nameLabel]]; ok && !src.HasInternal("GET", path) {
		c.failf("%s: %s serves no %s (no internal GET route in %s/%s.txt)", where, d.Name, path, RoutesDir, src.Name)
	}
	for _, np := range r.NetworkPolicies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			fromMonitoring := slices.ContainsFunc(rule.From, func(p networkingv1.NetworkPolicyPeer) bool {
				return p.NamespaceSelector != nil && p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == MonitoringNamespace
			})
			onPort := len(rule.Ports) == 0 || slices.ContainsFunc(rule.Ports, func(p networkingv1.NetworkPolicyPort) bool {
				return p.Port != nil && *p.Port == port
			})
			if fromMonitoring && onPort {
				return
			}
		}
		c.failf("%s: NetworkPolicy %s does not admit namespace %s on port %s", where, np.Name, MonitoringNamespace, port.String())
	}
}
