package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Snapshot is one namespace as the API server returned it: the workloads
// and the objects that refer to them.
type Snapshot struct {
	// Namespace is the namespace every list was read from.
	Namespace       string
	Deployments     []appsv1.Deployment
	Jobs            []batchv1.Job
	CronJobs        []batchv1.CronJob
	HPAs            []autoscalingv2.HorizontalPodAutoscaler
	PDBs            []policyv1.PodDisruptionBudget
	NetworkPolicies []networkingv1.NetworkPolicy
	Services        []corev1.Service
}

// template is the pod template of one workload. With no controller manager
// running, no pod exists: selectors are matched against the templates the
// pods would be made from.
type template struct {
	owner string
	spec  corev1.PodTemplateSpec
}

// Check returns one error per dangling reference in s: an HPA whose
// scaleTargetRef names no Deployment, a PDB or Service selecting no
// Deployment's pods, a NetworkPolicy selecting no pods or naming a port the
// selected pods lack, a same-namespace peer selecting no pods.
func Check(s Snapshot) []error {
	var errs []error
	report := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{s.Namespace}, args...)...))
	}
	var deployments, all []template
	byName := map[string]bool{}
	for _, d := range s.Deployments {
		byName[d.Name] = true
		deployments = append(deployments, template{"Deployment/" + d.Name, d.Spec.Template})
	}
	all = append(all, deployments...)
	for _, j := range s.Jobs {
		all = append(all, template{"Job/" + j.Name, j.Spec.Template})
	}
	// A CronJob's pods (marketdata-svc sync) are made from its Job template.
	for _, cj := range s.CronJobs {
		all = append(all, template{"CronJob/" + cj.Name, cj.Spec.JobTemplate.Spec.Template})
	}

	for _, h := range s.HPAs {
		ref := h.Spec.ScaleTargetRef
		switch {
		case ref.Kind != "Deployment" || ref.APIVersion != "apps/v1":
			report("HorizontalPodAutoscaler %s: scaleTargetRef %s %s/%s is not an apps/v1 Deployment", h.Name, ref.APIVersion, ref.Kind, ref.Name)
		case !byName[ref.Name]:
			report("HorizontalPodAutoscaler %s: scaleTargetRef Deployment/%s does not exist", h.Name, ref.Name)
		}
	}
	for _, p := range s.PDBs {
		if _, err := selecting(p.Spec.Selector, deployments); err != nil {
			report("PodDisruptionBudget %s: %v", p.Name, err)
		}
	}
	for _, svc := range s.Services {
		if len(svc.Spec.Selector) == 0 {
			continue // a Service without a selector has its endpoints managed by hand
		}
		matched, err := selecting(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, deployments)
		if err != nil {
			report("Service %s: %v", svc.Name, err)
			continue
		}
		for _, port := range svc.Spec.Ports {
			target := port.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(port.Port)
			}
			if missing := lackingPort(matched, target, port.Protocol); missing != "" {
				report("Service %s: port %s: targetPort %s is not a container port of %s", svc.Name, port.Name, target.String(), missing)
			}
		}
	}
	for _, np := range s.NetworkPolicies {
		matched, err := selecting(&np.Spec.PodSelector, all)
		if err != nil {
			report("NetworkPolicy %s: podSelector: %v", np.Name, err)
			continue
		}
		var ports []networkingv1.NetworkPolicyPort
		var peers []networkingv1.NetworkPolicyPeer
		for _, r := range np.Spec.Ingress {
			ports = append(ports, r.Ports...)
			peers = append(peers, r.From...)
		}
		for _, r := range np.Spec.Egress {
			peers = append(peers, r.To...)
		}
		for _, p := range ports {
			if p.Port == nil || p.Port.Type != intstr.String {
				continue // a numbered port is allowed whether or not a container listens
			}
			proto := corev1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			// A named port admits traffic to the selected pods that have it.
			if !anyHasPort(matched, *p.Port, proto) {
				report("NetworkPolicy %s: ingress port %q is a container port of none of the selected pods", np.Name, p.Port.StrVal)
			}
		}
		for _, peer := range peers {
			// Peers in other namespaces live outside the applied set.
			if peer.PodSelector == nil || peer.NamespaceSelector != nil {
				continue
			}
			if _, err := selecting(peer.PodSelector, all); err != nil {
				report("NetworkPolicy %s: peer podSelector: %v", np.Name, err)
			}
		}
	}
	return errs
}

// selecting returns the templates sel matches, or an error when it matches
// none or cannot be parsed.
func selecting(sel *metav1.LabelSelector, from []template) ([]template, error) {
	if sel == nil {
		return nil, fmt.Errorf("no selector")
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	var out []template
	for _, t := range from {
		if s.Matches(labels.Set(t.spec.Labels)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %s matches the pods of no workload", s)
	}
	return out, nil
}

// lackingPort returns the first template whose containers do not expose
// port (by name or number, with protocol), or "" when all of them do.
func lackingPort(ts []template, port intstr.IntOrString, proto corev1.Protocol) string {
	for _, t := range ts {
		if !hasPort(t, port, proto) {
			return t.owner
		}
	}
	return ""
}

// anyHasPort reports whether one of ts exposes port.
func anyHasPort(ts []template, port intstr.IntOrString, proto corev1.Protocol) bool {
	for _, t := range ts {
		if hasPort(t, port, proto) {
			return true
		}
	}
	return false
}

// hasPort reports whether a container of t exposes port (by name or
// number) with protocol proto (TCP when empty, as the API server defaults).
func hasPort(t template, port intstr.IntOrString, proto corev1.Protocol) bool {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, c := range t.spec.Spec.Containers {
		for _, cp := range c.Ports {
			p := cp.Protocol
			if p == "" {
				p = corev1.ProtocolTCP
			}
			if p == proto && (port.Type == intstr.String && cp.Name == port.StrVal ||
				port.Type == intstr.Int && cp.ContainerPort == port.IntVal) {
				return true
			}
		}
	}
	return false
}
