package httpapi

import (
	_ "embed"
	"fmt"

	"github.com/goccy/go-yaml"
)

// openapiYAML and openapiV2YAML are the OpenAPI 3.1 documents of /v1 and
// /v2, written as YAML for people and served as JSON.
var (
	//go:embed openapi.yaml
	openapiYAML []byte
	//go:embed openapi_v2.yaml
	openapiV2YAML []byte
)

// OpenAPIJSON returns the /v1 OpenAPI document as JSON.
func OpenAPIJSON() ([]byte, error) { return toJSON(openapiYAML) }

// OpenAPIV2JSON returns the /v2 OpenAPI document as JSON.
func OpenAPIV2JSON() ([]byte, error) { return toJSON(openapiV2YAML) }

func toJSON(doc []byte) ([]byte, error) {
	b, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return b, nil
}
