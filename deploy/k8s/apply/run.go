package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// fieldManager is the manager `kubectl apply --server-side` records; an
// object it owns went through admission as this run's apply.
const fieldManager = "kubectl"

// run reads the rendered overlay named by -f, finds each of its objects in
// the API server of -kubeconfig (default $KUBECONFIG) and checks the
// references of every namespace it holds. It prints one line per overlay
// and returns every problem found.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("k8sapplycheck", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", getenv("KUBECONFIG"), "kubeconfig of the API server")
	manifest := fs.String("f", "", "rendered overlay (kustomize build output) that was applied")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || *manifest == "" {
		return errors.New("usage: k8sapplycheck -kubeconfig FILE -f RENDERED.yaml")
	}
	data, err := os.ReadFile(*manifest)
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	objs, err := decodeAll(data)
	if err != nil {
		return fmt.Errorf("decode %s: %w", *manifest, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	typed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))

	var problems []error
	missing := 0
	kinds := map[string]int{}
	namespaces := map[string]bool{}
	for _, o := range objs {
		id := fmt.Sprintf("%s %s/%s", o.GroupVersionKind().GroupVersion(), o.GetKind(), o.GetName())
		if err := present(ctx, dyn, mapper, o); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", id, err))
			missing++
			continue
		}
		kinds[o.GetKind()]++
		if o.GetNamespace() != "" {
			namespaces[o.GetNamespace()] = true
		}
	}
	var checked []string
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		snap, err := snapshot(ctx, typed, ns)
		if err != nil {
			return err
		}
		problems = append(problems, Check(snap)...)
		checked = append(checked, fmt.Sprintf("%s (%d HPA, %d PDB, %d NetworkPolicy, %d Service against %d Deployment, %d Job)",
			ns, len(snap.HPAs), len(snap.PDBs), len(snap.NetworkPolicies), len(snap.Services), len(snap.Deployments), len(snap.Jobs)))
	}
	var counts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		counts = append(counts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	fmt.Fprintf(stdout, "%d of %d objects in the API server (%s); references checked in %s\n",
		len(objs)-missing, len(objs), strings.Join(counts, ", "), strings.Join(checked, "; "))
	return errors.Join(problems...)
}

// present fails unless o exists in the API server and this run's
// server-side apply owns fields of it.
func present(ctx context.Context, dyn dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, o unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
	if err != nil {
		return fmt.Errorf("the API server does not serve it: %w", err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == "namespace" {
		ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	got, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	for _, f := range got.GetManagedFields() {
		if f.Manager == fieldManager && f.Operation == metav1.ManagedFieldsOperationApply {
			return nil
		}
	}
	return fmt.Errorf("exists, but not applied by %q server-side", fieldManager)
}

// snapshot lists the workloads and the objects referring to them in ns.
func snapshot(ctx context.Context, c kubernetes.Interface, ns string) (Snapshot, error) {
	l := &lists{ctx: ctx, ns: ns}
	d := list(l, "deployments", c.AppsV1().Deployments(ns))
	j := list(l, "jobs", c.BatchV1().Jobs(ns))
	cj := list(l, "cronjobs", c.BatchV1().CronJobs(ns))
	h := list(l, "hpas", c.AutoscalingV2().HorizontalPodAutoscalers(ns))
	p := list(l, "pdbs", c.PolicyV1().PodDisruptionBudgets(ns))
	n := list(l, "networkpolicies", c.NetworkingV1().NetworkPolicies(ns))
	v := list(l, "services", c.CoreV1().Services(ns))
	if l.err != nil {
		return Snapshot{Namespace: ns}, l.err
	}
	return Snapshot{Namespace: ns, Deployments: d.Items, Jobs: j.Items, CronJobs: cj.Items, HPAs: h.Items, PDBs: p.Items,
		NetworkPolicies: n.Items, Services: v.Items}, nil
}

// lister is the one method snapshot needs of each typed client of a
// namespace.
type lister[L any] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
}

// lists reads a namespace's lists one kind after another and keeps the
// first error: after it, nothing more is read.
type lists struct {
	ctx context.Context
	ns  string
	err error
}

// list is everything of kind that c lists, or the zero L once l holds an
// error.
func list[L any](l *lists, kind string, c lister[L]) L {
	var out L
	if l.err != nil {
		return out
	}
	out, err := c.List(l.ctx, metav1.ListOptions{})
	if err != nil {
		l.err = fmt.Errorf("list %s in %s: %w", kind, l.ns, err)
	}
	return out
}

// decodeAll splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeAll(data []byte) ([]unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read document: %w", err)
		}
		var o unstructured.Unstructured
		if err := utilyaml.Unmarshal(doc, &o.Object); err != nil {
			return nil, fmt.Errorf("document %d: %w", len(out)+1, err)
		}
		if len(o.Object) == 0 {
			continue
		}
		out = append(out, o)
	}
}
