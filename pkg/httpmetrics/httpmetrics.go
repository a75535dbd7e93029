// Package httpmetrics turns the parts of an HTTP request that end up in
// Prometheus labels into values from small closed sets.
//
// A label value that a client can choose is a series the client can create:
// a made-up method or an unmatched path per request grows /metrics and the
// process without bound (an audit grew notes-svc's /metrics to 242 MB with
// 2,000 requests carrying 8 KB methods, no key needed). Every label both
// services derive from a request goes through one of these functions, so
// the number of series is bounded by construction: methods by the ten
// values of Method, routes by the service's route table plus "unmatched",
// statuses by the codes net/http knows plus one value per class.
package httpmetrics

import (
	"net/http"
	"strconv"
)

// Other is the label of every method that is not a standard one.
const Other = "OTHER"

// Unmatched is the route label of a request that matched no route.
const Unmatched = "unmatched"

// Method returns m when it is one of the methods of RFC 9110 or PATCH, and
// Other for anything else. Methods are case-sensitive (RFC 9110 9.1), so
// "get" is Other too.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return Other
}

// Route returns the route template a router matched (gin's FullPath), or
// Unmatched when it matched none. It takes the template, never the raw path:
// templates come from the service's own route table, so they are a closed
// set.
func Route(template string) string {
	if template == "" {
		return Unmatched
	}
	return template
}

// Status returns the decimal status code when net/http knows it, and the
// class ("2xx" … "5xx") otherwise. A handler can only write codes 100-999,
// so at most 63 known codes plus 9 classes exist.
func Status(code int) string {
	switch code {
	// The statuses the services answer most, without an allocation.
	case http.StatusOK:
		return "200"
	case http.StatusCreated:
		return "201"
	case http.StatusNoContent:
		return "204"
	case http.StatusNotModified:
		return "304"
	case http.StatusBadRequest:
		return "400"
	case http.StatusUnauthorized:
		return "401"
	case http.StatusNotFound:
		return "404"
	case http.StatusTooManyRequests:
		return "429"
	case http.StatusInternalServerError:
		return "500"
	case http.StatusServiceUnavailable:
		return "503"
	}
	if http.StatusText(code) != "" {
		return strconv.Itoa(code)
	}
	if code >= 100 && code <= 999 {
		return strconv.Itoa(code/100) + "xx"
	}
	return "invalid"
}
