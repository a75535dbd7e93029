package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/recovery"
)

// problemTypeBase prefixes every problem type URI; docs/API.md lists them.
const problemTypeBase = "https://tickerdesk.dev/problems/"

// problem is an RFC 9457 problem details object.
type problem struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Detail    string       `json:"detail,omitempty"`
	Instance  string       `json:"instance,omitempty"`
	RequestID string       `json:"request_id"`
	Errors    []fieldError `json:"errors,omitempty"`
}

// fieldError names one invalid field, header or query parameter.
type fieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Errors of the HTTP layer itself; problemFor maps them with the domain's.
var (
	errRouteNotFound    = errors.New("no such route")
	errMethodNotAllowed = errors.New("method not allowed")
	errRateLimited      = errors.New("rate limit reached")
)

// requestError is a request the server refuses before it reaches the
// domain: status is 400, 413 or 415.
type requestError struct {
	status int
	detail string
	field  string
}

func (e *requestError) Error() string { return e.detail }

// scopeError reports a key that lacks the scope an operation needs.
type scopeError struct{ scope string }

func (e *scopeError) Error() string { return "api key lacks scope " + e.scope }

// problemFor is the one place that maps an error to an HTTP status and
// problem. Anything it does not recognise is a 500 whose cause is logged,
// never sent.
func problemFor(err error) problem {
	var (
		verr   *fielderr.List
		reqErr *requestError
		scErr  *scopeError
		parErr *notes.ParamError
	)
	p := func(status int, typ, title, detail string) problem {
		return problem{Type: problemTypeBase + typ, Title: title, Status: status, Detail: detail}
	}
	switch {
	case errors.As(err, &verr):
		out := p(http.StatusUnprocessableEntity, "validation-failed", "Validation failed", "The request has invalid fields; see errors.")
		for _, f := range verr.Fields {
			out.Errors = append(out.Errors, fieldError{Field: f.Name, Detail: f.Message})
		}
		return out
	case errors.As(err, &reqErr):
		var out problem
		switch reqErr.status {
		case http.StatusRequestEntityTooLarge:
			out = p(reqErr.status, "body-too-large", "Request body too large", reqErr.detail)
		case http.StatusUnsupportedMediaType:
			out = p(reqErr.status, "unsupported-media-type", "Unsupported media type", reqErr.detail)
		default:
			out = p(http.StatusBadRequest, "malformed-request", "Malformed request", reqErr.detail)
		}
		out.Errors = []fieldError{{Field: reqErr.field, Detail: reqErr.detail}}
		return out
	case errors.As(err, &parErr):
		out := p(http.StatusBadRequest, "malformed-request", "Malformed request", parErr.Error())
		out.Errors = []fieldError{{Field: parErr.Field.Name, Detail: parErr.Field.Message}}
		return out
	case errors.Is(err, auth.ErrMissingKey):
		return p(http.StatusUnauthorized, "unauthorized", "Unauthorized", "Send an API key as Authorization: Bearer <key>.")
	case errors.Is(err, auth.ErrInvalidKey):
		return p(http.StatusUnauthorized, "unauthorized", "Unauthorized", "The API key is malformed, unknown, revoked or expired.")
	case errors.Is(err, auth.ErrThrottled):
		return p(http.StatusTooManyRequests, "too-many-failed-attempts", "Too many failed attempts", "Too many invalid API keys came from your address; retry after the time in Retry-After.")
	case errors.Is(err, errRateLimited):
		return p(http.StatusTooManyRequests, "rate-limited", "Rate limit reached", "Your API key has made more requests than its rate allows; retry after the time in Retry-After.")
	case errors.As(err, &scErr):
		return p(http.StatusForbidden, "forbidden", "Forbidden", "The API key lacks the "+scErr.scope+" scope.")
	case errors.Is(err, notes.ErrNotFound):
		return p(http.StatusNotFound, "not-found", "Not found", "No note with this id exists in your account.")
	case errors.Is(err, webhook.ErrNotFound):
		return p(http.StatusNotFound, "not-found", "Not found", "No webhook endpoint or delivery with this id exists in your account.")
	case errors.Is(err, errNoWebhooks):
		return p(http.StatusNotFound, "not-found", "Not found", "This server does not serve webhooks.")
	case errors.Is(err, webhook.ErrTooManyEndpoints):
		return p(http.StatusConflict, "webhook-endpoint-limit", "Too many webhook endpoints",
			"Your account already has "+strconv.Itoa(webhook.MaxEndpoints)+" webhook endpoints, the most it may; delete one first.")
	case errors.Is(err, errRouteNotFound):
		return p(http.StatusNotFound, "not-found", "Not found", "No resource exists at this path.")
	case errors.Is(err, errMethodNotAllowed):
		return p(http.StatusMethodNotAllowed, "method-not-allowed", "Method not allowed", "The resource does not support this method; see the Allow header.")
	case errors.Is(err, notes.ErrPreconditionFailed):
		return p(http.StatusPreconditionFailed, "precondition-failed", "Precondition failed", "The note changed since the ETag given in If-Match; fetch it again and retry.")
	case errors.Is(err, notes.ErrIdempotencyInFlight):
		return p(http.StatusConflict, "idempotency-key-in-use", "Idempotency key in use", "A request with this Idempotency-Key is still being processed; retry later.")
	case errors.Is(err, notes.ErrIdempotencyMismatch):
		out := p(http.StatusUnprocessableEntity, "idempotency-key-reused", "Idempotency key reused", "This Idempotency-Key was used with a different request body.")
		out.Errors = []fieldError{{Field: "Idempotency-Key", Detail: "was already used with a different request body"}}
		return out
	case errors.Is(err, notes.ErrTooManyListings):
		return p(http.StatusTooManyRequests, "too-many-listings", "Too many listings", "Your account already has as many unpaged listings in progress as it may; retry when one has finished, after the time in Retry-After, or page with limit.")
	case errors.Is(err, notes.ErrListingsBusy):
		return p(http.StatusServiceUnavailable, "listings-busy", "Service busy", "The server has as many unpaged listings in progress as it may; retry after the time in Retry-After, or page with limit.")
	case errors.Is(err, notes.ErrTrashed):
		return p(http.StatusConflict, "note-trashed", "Note in the trash", "The note is in the trash and cannot be edited; restore it first (POST /v1/notes/{id}/restore).")
	case errors.Is(err, notes.ErrCursorExpired):
		return p(http.StatusGone, "cursor-expired", "Cursor expired", "The cursor points before the oldest event kept; resync in full (list your notes, then follow the feed from its next_cursor).")
	case errors.Is(err, notes.ErrConflict):
		return p(http.StatusConflict, "conflict", "Conflict", "A concurrent write got in the way; retry the request.")
	case errors.Is(err, notes.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return p(http.StatusServiceUnavailable, "timeout", "Service unavailable", "The request took too long; retry later.")
	case errors.Is(err, notes.ErrUnavailable):
		return p(http.StatusServiceUnavailable, "unavailable", "Service unavailable", "The service cannot reach its database; retry later.")
	}
	return p(http.StatusInternalServerError, "internal", "Internal server error", "The server failed to handle the request; quote the request_id when reporting it.")
}

// fail answers c with the problem for err, logging the errors that are
// the server's fault once.
func (s *Server) fail(c *gin.Context, err error) {
	p := problemFor(err)
	p.RequestID = httpedge.RequestIDOf(c)
	p.Instance = c.Request.URL.EscapedPath()
	switch p.Status {
	case http.StatusUnauthorized:
		if errors.Is(err, auth.ErrInvalidKey) {
			c.Header("WWW-Authenticate", `Bearer realm="notes", error="invalid_token"`)
		} else {
			c.Header("WWW-Authenticate", `Bearer realm="notes"`)
		}
	case http.StatusForbidden:
		var scErr *scopeError
		if errors.As(err, &scErr) {
			c.Header("WWW-Authenticate", `Bearer realm="notes", error="insufficient_scope", scope="`+scErr.scope+`"`)
		}
	case http.StatusTooManyRequests:
		var te *auth.ThrottledError
		if errors.As(err, &te) {
			c.Header("Retry-After", strconv.Itoa(int(te.RetryAfter.Seconds()+0.999)))
		}
	case http.StatusServiceUnavailable:
		c.Header("Retry-After", "1")
		s.log.Warn("request failed", "request_id", p.RequestID, "status", p.Status, "error", err.Error())
	case http.StatusInternalServerError:
		if !errors.Is(err, recovery.ErrPanic) { // logged with its stack already
			s.log.Error("request failed", "request_id", p.RequestID, "status", p.Status, "error", err.Error())
		}
	}
	writeProblem(c, p)
}

func writeProblem(c *gin.Context, p problem) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		buf.Reset()
		buf.WriteString(`{"type":"about:blank","title":"Internal server error","status":500,"request_id":"` + p.RequestID + `"}`)
	}
	body := buf.Bytes()
	c.Header("Content-Type", "application/problem+json")
	c.Header("Content-Length", strconv.Itoa(len(body)))
	c.Status(p.Status)
	_, _ = c.Writer.Write(body)
	c.Abort()
}
