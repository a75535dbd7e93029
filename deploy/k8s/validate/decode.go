package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// NewScheme returns the client-go scheme (every built-in API group) plus
// the Gateway API v1 and Prometheus Operator (monitoring.coreos.com/v1)
// types.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("new scheme: %w", err)
	}
	if err := gatewayv1.Install(s); err != nil {
		return nil, fmt.Errorf("new scheme: gateway api: %w", err)
	}
	if err := monitoringv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("new scheme: monitoring: %w", err)
	}
	return s, nil
}

// Decoder decodes YAML manifests strictly: an unknown or duplicated field, a
// wrong type or an unregistered kind is an error.
type Decoder struct {
	serializer *json.Serializer
}

// NewDecoder returns a strict YAML decoder over scheme.
func NewDecoder(scheme *runtime.Scheme) *Decoder {
	return &Decoder{serializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true})}
}

// Object is one decoded manifest and where it came from.
type Object struct {
	// Index is the 0-based position of the document in the stream.
	Index int
	// Obj is the typed object.
	Obj runtime.Object
}

// DecodeAll splits a multi-document YAML stream and decodes every document.
// It returns every error, not just the first.
func (d *Decoder) DecodeAll(stream []byte) ([]Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []Object
	var errs []error
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("split documents: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			i--
			continue
		}
		obj, err := d.Decode(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", i, headline(doc), err))
			continue
		}
		objs = append(objs, Object{Index: i, Obj: obj})
	}
	return objs, errors.Join(errs...)
}

// Decode decodes one YAML document strictly into its registered Go type.
func (d *Decoder) Decode(doc []byte) (runtime.Object, error) {
	obj, _, err := d.serializer.Decode(doc, nil, nil)
	if err != nil {
		// In strict mode the serializer returns the object together with a
		// strict decoding error; either way the document is rejected.
		return nil, err
	}
	if _, unstructured := obj.(runtime.Unstructured); unstructured {
		return nil, errors.New("decoded into an untyped object")
	}
	return obj, nil
}

// headline names a document by its kind and name lines for error messages.
func headline(doc []byte) string {
	var kind, name string
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case kind == "" && strings.HasPrefix(line, "kind:"):
			kind = strings.TrimSpace(strings.TrimPrefix(line, "kind:"))
		case name == "" && strings.HasPrefix(line, "  name:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "  name:"))
		}
	}
	return kind + "/" + name
}

// Build runs `kustomize build dir` with the given binary.
func Build(kustomize, dir string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
