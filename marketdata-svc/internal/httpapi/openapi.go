package httpapi

import (
	_ "embed"
	"fmt"

	"github.com/goccy/go-yaml"
)

// openapiYAML is the API's OpenAPI 3.1 document, written as YAML for people
// and served as JSON.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIJSON returns the OpenAPI document as JSON.
func OpenAPIJSON() ([]byte, error) {
	b, err := yaml.YAMLToJSON(openapiYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return b, nil
}
