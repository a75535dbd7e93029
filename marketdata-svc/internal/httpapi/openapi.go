package httpapi

import (
	_ "embed"
	"fmt"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"

	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
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

// newDocs returns the interactive reference of both documents at /docs, v1
// first as marketstack's; an unknown asset there is marketstack's 404 like
// any unknown function.
func newDocs(s *Server) (*apidocs.Pages, error) {
	return apidocs.New("marketdata-svc API reference", func(c *gin.Context) { s.writeError(c, errUnknownFunction) },
		apidocs.Document{Name: "v1", URL: "/v1/openapi.json"}, apidocs.Document{Name: "v2", URL: "/v2/openapi.json"})
}
