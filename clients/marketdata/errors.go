package marketdataclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Error is an error answer of marketdata-svc in marketstack's shape: the
// HTTP status and the error's code, message and context. Use errors.As to
// reach it from an error a Client method returned.
type Error struct {
	// Status is the HTTP status code, such as 422.
	Status int
	// Code is marketstack's error code, such as invalid_access_key,
	// validation_error or no_valid_symbols_provided.
	Code string
	// Message is the server's explanation.
	Message string
	// Context names, for a validation_error, each failing parameter with
	// its problems; it is empty otherwise.
	Context map[string][]ContextEntry
}

// ContextEntry is one problem of one parameter of a validation_error.
type ContextEntry struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

// Error gives the status, code and message in one line.
func (e *Error) Error() string {
	s := fmt.Sprintf("marketdata: %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// errorFrom builds the Error of a non-success answer. A body that is not
// in marketstack's shape still gives an Error with the status and its
// text. The access key is cut out of the message, should a server (or a
// proxy) echo it.
func errorFrom(resp *http.Response, body []byte, accessKey string) *Error {
	e := &Error{Status: resp.StatusCode}
	var m struct {
		Error struct {
			Code    string                    `json:"code"`
			Message string                    `json:"message"`
			Context map[string][]ContextEntry `json:"context"`
		} `json:"error"`
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && json.Unmarshal(body, &m) == nil {
		e.Code, e.Message, e.Context = m.Error.Code, m.Error.Message, m.Error.Context
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if accessKey != "" {
		e.Message = strings.ReplaceAll(e.Message, accessKey, redacted)
	}
	return e
}

// redacted replaces the access key wherever it would show.
const redacted = "REDACTED"

// redactErr keeps the access key out of a transport error: net/http's
// *url.Error quotes the whole request URL, query string included.
func redactErr(err error, accessKey string) error {
	if accessKey == "" {
		return err
	}
	if ue, ok := err.(*url.Error); ok {
		out := *ue
		if u, perr := url.Parse(ue.URL); perr == nil {
			q := u.Query()
			if q.Has("access_key") {
				q.Set("access_key", redacted)
				u.RawQuery = q.Encode()
			}
			out.URL = u.String()
		}
		out.URL = strings.ReplaceAll(out.URL, url.QueryEscape(accessKey), redacted)
		out.URL = strings.ReplaceAll(out.URL, accessKey, redacted)
		return &out
	}
	return err
}
