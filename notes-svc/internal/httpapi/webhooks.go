package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// MaxDeliveryLimit bounds limit on the delivery log; DefaultDeliveryLimit
// is the page without one, since a log grows without bound.
const (
	MaxDeliveryLimit     = 100
	DefaultDeliveryLimit = 20
)

// errNoWebhooks answers the webhook routes of a server built without
// them (handler tests): they exist, but nothing is behind them.
var errNoWebhooks = errors.New("webhooks are not configured")

// renderEndpoint is a webhook endpoint as the API shows it (openapi.yaml,
// WebhookEndpoint), with secret only in the answers of creation and
// rotation. A map: encoding/json writes its members in key order.
func renderEndpoint(e webhook.Endpoint, secret string, now time.Time) map[string]any {
	out := map[string]any{"id": e.ID, "object": "webhook_endpoint", "url": e.URL, "types": e.Types, "enabled": e.Enabled,
		"disabled_reason": optional(e.DisabledReason), "previous_secret_expires_at": nil,
		"created_at": e.CreatedAt.UTC().Format(timeFormat), "updated_at": e.UpdatedAt.UTC().Format(timeFormat)}
	if e.Types == nil {
		out["types"] = []string{}
	}
	if secret != "" {
		out["secret"] = secret
	}
	if e.PreviousExpiresAt != nil && now.Before(*e.PreviousExpiresAt) {
		out["previous_secret_expires_at"] = e.PreviousExpiresAt.UTC().Format(timeFormat)
	}
	return out
}

// renderDelivery is one entry of the delivery log (WebhookDelivery).
func renderDelivery(d webhook.Delivery) map[string]any {
	out := map[string]any{"id": d.ID, "object": "webhook_delivery", "endpoint_id": d.EndpointID, "event_id": d.EventID,
		"event_type": d.EventType, "status": d.Status, "attempts": d.Attempts, "last_response_status": d.LastStatus,
		"last_latency_ms": d.LastLatencyMS, "last_error": optional(d.LastError), "next_attempt_at": nil,
		"created_at": d.CreatedAt.UTC().Format(timeFormat), "updated_at": d.UpdatedAt.UTC().Format(timeFormat)}
	if d.NextAttemptAt != nil && d.Status == webhook.StatusPending {
		out["next_attempt_at"] = d.NextAttemptAt.UTC().Format(timeFormat)
	}
	return out
}

// optional is s, or null when it is empty.
func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// endpointFields is the JSON object of an endpoint request, raw per member
// so that absent, null and wrongly typed values are told apart.
type endpointFields struct {
	URL     json.RawMessage `json:"url"`
	Types   json.RawMessage `json:"types"`
	Enabled json.RawMessage `json:"enabled"`
}

const endpointNoun = "a webhook endpoint"

func decodeEndpointDraft(body []byte) (webhook.Draft, error) {
	var f endpointFields
	if err := decodeObject(body, &f, endpointNoun); err != nil {
		return webhook.Draft{}, err
	}
	var verr fielderr.List
	u := textField("url", f.URL, true, &verr)
	types := stringsField("types", f.Types, false, "send every type", &verr)
	enabled := boolField("enabled", f.Enabled, false, &verr)
	if err := verr.Err(); err != nil {
		return webhook.Draft{}, err
	}
	d := webhook.Draft{URL: *u, Enabled: enabled}
	if types != nil {
		d.Types = *types
	}
	return d, nil
}

func decodeEndpointPatch(body []byte) (webhook.Patch, error) {
	var f endpointFields
	if err := decodeObject(body, &f, endpointNoun); err != nil {
		return webhook.Patch{}, err
	}
	var verr fielderr.List
	p := webhook.Patch{URL: textField("url", f.URL, false, &verr), Types: stringsField("types", f.Types, true, "send every type", &verr)}
	if string(f.Enabled) == "null" {
		verr.Add("enabled", "must be true or false, not null")
	} else {
		p.Enabled = boolField("enabled", f.Enabled, false, &verr)
	}
	if err := verr.Err(); err != nil {
		return webhook.Patch{}, err
	}
	return p, nil
}

func (s *Server) webhooksOn(c *gin.Context) bool {
	if s.webhooks == nil {
		s.fail(c, errNoWebhooks)
		return false
	}
	return true
}

func (s *Server) createEndpoint(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	d, ok := decodeBody(s, c, mediaJSON, decodeEndpointDraft)
	if !ok {
		return
	}
	e, secret, err := s.webhooks.Create(c.Request.Context(), accountOf(c), d)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/webhook_endpoints/"+e.ID)
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusCreated, renderEndpoint(e, secret, time.Now()))
}

func (s *Server) listEndpoints(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	list, err := s.webhooks.List(c.Request.Context(), accountOf(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	now := time.Now()
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i] = renderEndpoint(e, "", now)
	}
	writeJSON(c, http.StatusOK, out)
}

// endpointOp answers an operation on the endpoint of the path with the
// endpoint it returns, and the secret it returns, if any, which no cache
// may keep.
func (s *Server) endpointOp(c *gin.Context, op func(ctx context.Context, accountID, id string) (webhook.Endpoint, string, error)) {
	e, secret, err := op(c.Request.Context(), accountOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if secret != "" {
		c.Header("Cache-Control", "no-store")
	}
	writeJSON(c, http.StatusOK, renderEndpoint(e, secret, time.Now()))
}

// noSecret adapts an operation that returns no secret to endpointOp.
func noSecret(e webhook.Endpoint, err error) (webhook.Endpoint, string, error) { return e, "", err }

func (s *Server) getEndpoint(c *gin.Context) {
	if s.webhooksOn(c) {
		s.endpointOp(c, func(ctx context.Context, accountID, id string) (webhook.Endpoint, string, error) {
			return noSecret(s.webhooks.Get(ctx, accountID, id))
		})
	}
}

func (s *Server) patchEndpoint(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	if p, ok := decodeBody(s, c, mediaMergePatch, decodeEndpointPatch); ok {
		s.endpointOp(c, func(ctx context.Context, accountID, id string) (webhook.Endpoint, string, error) {
			return noSecret(s.webhooks.Update(ctx, accountID, id, p))
		})
	}
}

func (s *Server) rotateSecret(c *gin.Context) {
	if s.webhooksOn(c) {
		s.endpointOp(c, s.webhooks.RotateSecret)
	}
}

func (s *Server) deleteEndpoint(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	id := c.Param("id")
	if err := s.webhooks.Delete(c.Request.Context(), accountOf(c), id); err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, deleteJSON{Message: "Webhook endpoint deleted.", ID: id})
}

// listDeliveries answers a page of the delivery log, newest first, with
// X-Total-Count and Link as the notes listing has them.
func (s *Server) listDeliveries(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	q, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, &requestError{status: http.StatusBadRequest, field: "query", detail: "the query string is malformed (bad percent-encoding or a semicolon)"})
		return
	}
	page, err := pagination.Parse(pagination.Values(q), pagination.Bounds{DefaultLimit: DefaultDeliveryLimit, MaxLimit: MaxDeliveryLimit})
	if err != nil {
		s.fail(c, err)
		return
	}
	list, total, err := s.webhooks.Deliveries(c.Request.Context(), accountOf(c), c.Param("id"), page.Limit, page.Offset)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]map[string]any, len(list))
	for i, d := range list {
		out[i] = renderDelivery(d)
	}
	c.Header("X-Total-Count", strconv.FormatInt(total, 10))
	if links := pagination.Links(c.Request.URL, page, total); links != "" {
		c.Writer.Header().Add("Link", links)
	}
	writeJSON(c, http.StatusOK, out)
}

// acceptedJSON confirms a retry was queued.
type acceptedJSON struct {
	Message string `json:"message"`
	ID      string `json:"id"`
}

func (s *Server) retryDelivery(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	id := c.Param("delivery_id")
	if err := s.webhooks.Retry(c.Request.Context(), accountOf(c), c.Param("id"), id); err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusAccepted, acceptedJSON{Message: "Delivery queued to be sent again.", ID: id})
}
