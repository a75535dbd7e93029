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

// knownErrors are the errors that always mean the same problem, in the
// order problemFor tries them; field, when set, is named in the
// problem's errors.
var knownErrors = []struct {
	err                error
	status             int
	typ, title, detail string
	field, fieldDetail string
}{
	{err: auth.ErrMissingKey, status: http.StatusUnauthorized, typ: "unauthorized", title: "Unauthorized", detail: "Send an API key as Authorization: Bearer <key>."},
	{err: auth.ErrInvalidKey, status: http.StatusUnauthorized, typ: "unauthorized", title: "Unauthorized", detail: "The API key is malformed, unknown, revoked or expired."},
	{err: auth.ErrThrottled, status: http.StatusTooManyRequests, typ: "too-many-failed-attempts", title: "Too many failed attempts", detail: "Too many invalid API keys came from your address; retry after the time in Retry-After."},
	{err: errRateLimited, status: http.StatusTooManyRequests, typ: "rate-limited", title: "Rate limit reached", detail: "Your API key has made more requests than its rate allows; retry after the time in Retry-After."},
	{err: notes.ErrNotFound, status: http.StatusNotFound, typ: "not-found", title: "Not found", detail: "No note with this id exists in your account."},
	{err: webhook.ErrNotFound, status: http.StatusNotFound, typ: "not-found", title: "Not found", detail: "No webhook endpoint or delivery with this id exists in your account."},
	{err: errNoWebhooks, status: http.StatusNotFound, typ: "not-found", title: "Not found", detail: "This server does not serve webhooks."},
	{err: webhook.ErrTooManyEndpoints, status: http.StatusConflict, typ: "webhook-endpoint-limit", title: "Too many webhook endpoints",
		detail: "Your account already has " + strconv.Itoa(webhook.MaxEndpoints) + " webhook endpoints, the most it may; delete one first."},
	{err: errRouteNotFound, status: http.StatusNotFound, typ: "not-found", title: "Not found", detail: "No resource exists at this path."},
	{err: errMethodNotAllowed, status: http.StatusMethodNotAllowed, typ: "method-not-allowed", title: "Method not allowed", detail: "The resource does not support this method; see the Allow header."},
	{err: notes.ErrPreconditionFailed, status: http.StatusPreconditionFailed, typ: "precondition-failed", title: "Precondition failed", detail: "The note changed since the ETag given in If-Match; fetch it again and retry."},
	{err: notes.ErrIdempotencyInFlight, status: http.StatusConflict, typ: "idempotency-key-in-use", title: "Idempotency key in use", detail: "A request with this Idempotency-Key is still being processed; retry later."},
	{err: notes.ErrIdempotencyMismatch, status: http.StatusUnprocessableEntity, typ: "idempotency-key-reused", title: "Idempotency key reused", detail: "This Idempotency-Key was used with a different request body.",
		field: "Idempotency-Key", fieldDetail: "was already used with a different request body"},
	{err: notes.ErrTooManyListings, status: http.StatusTooManyRequests, typ: "too-many-listings", title: "Too many listings", detail: "Your account already has as many unpaged listings in progress as it may; retry when one has finished, after the time in Retry-After, or page with limit."},
	{err: notes.ErrListingsBusy, status: http.StatusServiceUnavailable, typ: "listings-busy", title: "Service busy", detail: "The server has as many unpaged listings in progress as it may; retry after the time in Retry-After, or page with limit."},
	{err: notes.ErrTrashed, status: http.StatusConflict, typ: "note-trashed", title: "Note in the trash", detail: "The note is in the trash and cannot be edited; restore it first (POST /v1/notes/{id}/restore)."},
	{err: notes.ErrCursorExpired, status: http.StatusGone, typ: "cursor-expired", title: "Cursor expired", detail: "The cursor points before the oldest event kept; resync in full (list your notes, then follow the feed from its next_cursor)."},
	{err: notes.ErrConflict, status: http.StatusConflict, typ: "conflict", title: "Conflict", detail: "A concurrent write got in the way; retry the request."},
	{err: notes.ErrTimeout, status: http.StatusServiceUnavailable, typ: "timeout", title: "Service unavailable", detail: "The request took too long; retry later."},
	{err: context.DeadlineExceeded, status: http.StatusServiceUnavailable, typ: "timeout", title: "Service unavailable", detail: "The request took too long; retry later."},
	{err: notes.ErrUnavailable, status: http.StatusServiceUnavailable, typ: "unavailable", title: "Service unavailable", detail: "The service cannot reach its database; retry later."},
}

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
	case errors.As(err, &scErr):
		return p(http.StatusForbidden, "forbidden", "Forbidden", "The API key lacks the "+scErr.scope+" scope.")
	}
	for _, k := range knownErrors {
		if errors.Is(err, k.err) {
			out := p(k.status, k.typ, k.title, k.detail)
			if k.field != "" {
				out.Errors = []fieldError{{Field: k.field, Detail: k.fieldDetail}}
			}
			return out
		}
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
