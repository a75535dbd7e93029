package main

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	apiLabels = map[string]string{"app.kubernetes.io/name": "svc", "app.kubernetes.io/component": "api"}
	jobLabels = map[string]string{"app.kubernetes.io/name": "svc", "app.kubernetes.io/component": "migrate"}
)

// good is a namespace shaped like one service of the overlays: every
// reference resolves.
func good() Snapshot {
	httpPort := intstr.FromString("http")
	return Snapshot{
		Namespace: "ns",
		Deployments: []appsv1.Deployment{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: apiLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "svc",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				}}},
			}},
		}},
		Jobs: []batchv1.Job{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc-migrate"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: jobLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "migrate"}}},
			}},
		}},
		HPAs: []autoscalingv2.HorizontalPodAutoscaler{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "svc"},
			},
		}},
		PDBs: []policyv1.PodDisruptionBudget{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: apiLabels}},
		}},
		NetworkPolicies: []networkingv1.NetworkPolicy{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "svc"}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From: []networkingv1.NetworkPolicyPeer{
						{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateway-system"}}},
						{PodSelector: &metav1.LabelSelector{MatchLabels: jobLabels}},
					},
					Ports: []networkingv1.NetworkPolicyPort{{Port: &httpPort}},
				}},
			},
		}},
		Services: []corev1.Service{{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: corev1.ServiceSpec{
				Selector: apiLabels,
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: httpPort}},
			},
		}},
	}
}

func TestCheckAcceptsResolvedReferences(t *testing.T) {
	if errs := Check(good()); len(errs) != 0 {
		t.Fatalf("Check(good) = %v, want no errors", errs)
	}
}

func TestCheckFindsDanglingReferences(t *testing.T) {
	tests := []struct {
		name  string
		plant func(*Snapshot)
		want  string
	}{
		{"hpa to a missing deployment", func(s *Snapshot) {
			s.HPAs[0].Spec.ScaleTargetRef.Name = "gone"
		}, "HorizontalPodAutoscaler svc: scaleTargetRef Deployment/gone does not exist"},
		{"hpa to another kind", func(s *Snapshot) {
			s.HPAs[0].Spec.ScaleTargetRef.Kind = "StatefulSet"
		}, "HorizontalPodAutoscaler svc: scaleTargetRef apps/v1 StatefulSet/svc is not an apps/v1 Deployment"},
		{"pdb selecting nothing", func(s *Snapshot) {
			s.PDBs[0].Spec.Selector.MatchLabels = map[string]string{"app.kubernetes.io/name": "other"}
		}, "PodDisruptionBudget svc: selector app.kubernetes.io/name=other matches the pods of no workload"},
		{"pdb selecting only job pods", func(s *Snapshot) {
			s.PDBs[0].Spec.Selector.MatchLabels = jobLabels
		}, "PodDisruptionBudget svc: selector"},
		{"pdb without selector", func(s *Snapshot) {
			s.PDBs[0].Spec.Selector = nil
		}, "PodDisruptionBudget svc: no selector"},
		{"networkpolicy selecting nothing", func(s *Snapshot) {
			s.NetworkPolicies[0].Spec.PodSelector.MatchLabels = map[string]string{"app": "typo"}
		}, "NetworkPolicy svc: podSelector: selector app=typo"},
		{"networkpolicy peer selecting nothing", func(s *Snapshot) {
			s.NetworkPolicies[0].Spec.Ingress[0].From[1].PodSelector.MatchLabels = map[string]string{"app": "typo"}
		}, "NetworkPolicy svc: peer podSelector"},
		{"networkpolicy port no pod has", func(s *Snapshot) {
			p := intstr.FromString("metrics")
			s.NetworkPolicies[0].Spec.Ingress[0].Ports[0].Port = &p
		}, `NetworkPolicy svc: ingress port "metrics"`},
		{"service selecting nothing", func(s *Snapshot) {
			s.Services[0].Spec.Selector = map[string]string{"app": "typo"}
		}, "Service svc: selector app=typo"},
		{"service target port missing", func(s *Snapshot) {
			s.Services[0].Spec.Ports[0].TargetPort = intstr.FromInt32(9090)
		}, "Service svc: port http: targetPort 9090 is not a container port of Deployment/svc"},
		{"deployment gone", func(s *Snapshot) {
			s.Deployments = nil
		}, "HorizontalPodAutoscaler svc: scaleTargetRef Deployment/svc does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good()
			tt.plant(&s)
			errs := Check(s)
			if len(errs) == 0 {
				t.Fatalf("Check found nothing, want %q", tt.want)
			}
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			if joined := strings.Join(all, "\n"); !strings.Contains(joined, "ns: "+tt.want) {
				t.Errorf("Check = %s\nwant an error containing %q", joined, "ns: "+tt.want)
			}
		})
	}
}

func TestCheckIgnoresPeersInOtherNamespaces(t *testing.T) {
	s := good()
	// kube-dns lives in kube-system, outside the applied namespaces.
	s.NetworkPolicies[0].Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
	}}}}
	if errs := Check(s); len(errs) != 0 {
		t.Fatalf("Check = %v, want no errors", errs)
	}
}

func TestDecodeAllSkipsEmptyDocuments(t *testing.T) {
	objs, err := decodeAll([]byte("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetNamespace() != "a" {
		t.Fatalf("decodeAll = %+v, want Namespace a and ConfigMap a/b", objs)
	}
	if _, err := decodeAll([]byte("kind: [")); err == nil {
		t.Fatal("decodeAll accepted broken YAML")
	}
}
