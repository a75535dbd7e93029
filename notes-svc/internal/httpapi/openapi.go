package httpapi

import (
	_ "embed"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
)

// openAPIYAML is the API reference, written in YAML for people and served
// as JSON.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPI returns the OpenAPI document as JSON, for tests and tools.
func OpenAPI() ([]byte, error) { return openAPIJSON() }

func openAPIJSON() ([]byte, error) {
	// goccy/go-yaml, marketdata-svc's YAML library too (and gin's already).
	out, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return out, nil
}

func (s *Server) openAPI(c *gin.Context) {
	c.Header("Content-Type", "application/json")
	c.Header("Content-Length", strconv.Itoa(len(s.openapi)))
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(s.openapi)
}
