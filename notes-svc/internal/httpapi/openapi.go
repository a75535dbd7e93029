package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"

	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
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
	// The aliases' operations merge (<<) their /v1 operation and override
	// its operationId and summary; YAMLToJSON writes both keys. Go readers
	// keep the last, but strict ones such as Swagger UI's reject the
	// document, so every object keeps one value per key.
	if out, err = lastKeyWins(out); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return out, nil
}

// lastKeyWins re-encodes a JSON document with one member per object key:
// the last value, where the key first appeared, as YAML's merge key means.
func lastKeyWins(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("dedupe keys: %w", err)
	}
	return json.Marshal(v)
}

// orderedObject is a JSON object that keeps its keys' first order.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := orderedObject{values: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			if _, seen := o.values[k]; !seen {
				o.keys = append(o.keys, k)
			}
			o.values[k] = v
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ]
		return list, err
	}
	return tok, nil
}

func (s *Server) openAPI(c *gin.Context) {
	c.Header("Content-Type", "application/json")
	c.Header("Content-Length", strconv.Itoa(len(s.openapi)))
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write(s.openapi)
}

// newDocs returns the interactive reference of the document at /docs; an
// unknown asset there is a 404 problem like any unknown route.
func newDocs(s *Server) (*apidocs.Pages, error) {
	return apidocs.New("notes-svc API reference", func(c *gin.Context) { s.fail(c, errRouteNotFound) },
		apidocs.Document{Name: "v1", URL: "/v1/openapi.json"})
}
