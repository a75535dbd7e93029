package httpapi

import (
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

// endpointJSON is a webhook endpoint as the API shows it; Secret only in
// the answers of creation and rotation.
type endpointJSON struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	URL               string   `json:"url"`
	Types             []string `json:"types"`
	Enabled           bool     `json:"enabled"`
	DisabledReason    *string  `json:"disabled_reason"`
	Secret            string   `json:"secret,omitempty"`
	PreviousExpiresAt *string  `json:"previous_secret_expires_at"`
	CreatedAt         string   `json:"created_at"`
	UpdatedAt         string   `json:"updated_at"`
}

func renderEndpoint(e webhook.Endpoint, secret string, now time.Time) endpointJSON {
	out := endpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, Types: e.Types, Enabled: e.Enabled, Secret: secret,
		CreatedAt: e.CreatedAt.UTC().Format(timeFormat), UpdatedAt: e.UpdatedAt.UTC().Format(timeFormat)}
	if out.Types == nil {
		out.Types = []string{}
	}
	if e.DisabledReason != "" {
		out.DisabledReason = &e.DisabledReason
	}
	if e.PreviousExpiresAt != nil && now.Before(*e.PreviousExpiresAt) {
		s := e.PreviousExpiresAt.UTC().Format(timeFormat)
		out.PreviousExpiresAt = &s
	}
	return out
}

// deliveryJSON is one entry of the delivery log.
type deliveryJSON struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	EndpointID    string  `json:"endpoint_id"`
	EventID       string  `json:"event_id"`
	EventType     string  `json:"event_type"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	LastStatus    *int    `json:"last_response_status"`
	LastLatencyMS *int    `json:"last_latency_ms"`
	LastError     *string `json:"last_error"`
	NextAttemptAt *string `json:"next_attempt_at"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

func renderDelivery(d webhook.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Status: d.Status, Attempts: d.Attempts, LastStatus: d.LastStatus, LastLatencyMS: d.LastLatencyMS,
		CreatedAt: d.CreatedAt.UTC().Format(timeFormat), UpdatedAt: d.UpdatedAt.UTC().Format(timeFormat)}
	if d.LastError != "" {
		out.LastError = &d.LastError
	}
	if d.NextAttemptAt != nil && d.Status == webhook.StatusPending {
		s := d.NextAttemptAt.UTC().Format(timeFormat)
		out.NextAttemptAt = &s
	}
	return out
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
	types := typesField(f.Types, false, &verr)
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
	p := webhook.Patch{URL: textField("url", f.URL, false, &verr), Types: typesField(f.Types, true, &verr)}
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

// typesField decodes types: an array of strings; null is all types in a
// merge patch.
func typesField(raw json.RawMessage, nullMeansAll bool, verr *fielderr.List) *[]string {
	if raw == nil {
		return nil
	}
	if string(raw) == "null" {
		if nullMeansAll {
			return &[]string{}
		}
		verr.Add("types", "must be an array of event types, not null; omit it for all types")
		return nil
	}
	var types []string
	if err := json.Unmarshal(raw, &types); err != nil {
		verr.Add("types", "must be an array of event types")
		return nil
	}
	if types == nil {
		types = []string{}
	}
	return &types
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
	out := make([]endpointJSON, len(list))
	for i, e := range list {
		out[i] = renderEndpoint(e, "", now)
	}
	writeJSON(c, http.StatusOK, out)
}

func (s *Server) getEndpoint(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	e, err := s.webhooks.Get(c.Request.Context(), accountOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, renderEndpoint(e, "", time.Now()))
}

func (s *Server) patchEndpoint(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	p, ok := decodeBody(s, c, mediaMergePatch, decodeEndpointPatch)
	if !ok {
		return
	}
	e, err := s.webhooks.Update(c.Request.Context(), accountOf(c), c.Param("id"), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, renderEndpoint(e, "", time.Now()))
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

func (s *Server) rotateSecret(c *gin.Context) {
	if !s.webhooksOn(c) {
		return
	}
	e, secret, err := s.webhooks.RotateSecret(c.Request.Context(), accountOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusOK, renderEndpoint(e, secret, time.Now()))
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
	out := make([]deliveryJSON, len(list))
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
