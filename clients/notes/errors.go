package notesclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// problemTypeBase prefixes the type URI of every problem notes-svc
// answers; the rest of the URI is the problem's short code.
const problemTypeBase = "https://tickerdesk.dev/problems/"

// Error is an error answer of notes-svc: the HTTP status and the RFC 9457
// problem details it carried. Use errors.As to reach it from an error a
// Client method returned.
type Error struct {
	// Status is the HTTP status code, such as 404.
	Status int
	// Type is the problem type URI, such as
	// https://tickerdesk.dev/problems/not-found.
	Type string
	// Code is the last segment of a notes-svc problem type, such as
	// not-found or too-many-listings (docs/API.md lists them); empty for
	// other types such as about:blank.
	Code string
	// Title is the problem's short summary.
	Title string
	// Detail explains this occurrence, when the server says more.
	Detail string
	// RequestID is the server's request id, to quote when reporting it.
	RequestID string
	// Errors names each invalid field or parameter of a validation problem.
	Errors []FieldError
}

// FieldError is one invalid field or parameter of a validation problem.
type FieldError struct {
	Field  string
	Detail string
}

// Error gives the status, code and detail in one line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "notes: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	for i, f := range e.Errors {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + ": " + f.Detail)
		if i == len(e.Errors)-1 {
			b.WriteString(")")
		}
	}
	return b.String()
}

// errorFrom builds the Error of a non-success answer. A body that is not
// a problem (a proxy's HTML page, say) still gives an Error with the status
// and its text, so callers can always use errors.As.
func errorFrom(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var p struct {
		Type      string       `json:"type"`
		Title     string       `json:"title"`
		Detail    string       `json:"detail"`
		RequestID string       `json:"request_id"`
		Errors    []FieldError `json:"errors"`
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && json.Unmarshal(body, &p) == nil {
		e.Type, e.Title, e.Detail, e.RequestID, e.Errors = p.Type, p.Title, p.Detail, p.RequestID, p.Errors
		if code, ok := strings.CutPrefix(p.Type, problemTypeBase); ok {
			e.Code = code
		}
	}
	if e.Title == "" {
		e.Title = http.StatusText(resp.StatusCode)
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-ID")
	}
	return e
}
