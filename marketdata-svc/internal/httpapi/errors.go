package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/ratelimit"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/recovery"
)

// Errors of the HTTP layer itself; domain and limit errors come from their
// packages.
var (
	errUnknownFunction   = errors.New("unknown api function")
	errMethodNotAllowed  = errors.New("method not allowed")
	errFunctionForbidden = errors.New("key lacks the scope of this function")
	// errIntradayRestricted answers an intraday route for a key without
	// the intraday scope: marketstack's clients read its 403 as "not in
	// your plan", where a 404 would read as a broken client.
	errIntradayRestricted = errors.New("intraday is not in the key's plan")
)

// datasetMissingError answers a v2 function whose dataset this service
// does not load (commodities, bonds, ETFs, SEC EDGAR...): marketstack's
// answer for a plan without the function, 403, so a client reads "not
// available here" rather than the 404 of a broken URL.
type datasetMissingError struct {
	// dataset names what an operator would load to serve the function.
	dataset string
}

func (e *datasetMissingError) Error() string { return "dataset not loaded: " + e.dataset }

// errorBody is marketstack's error shape.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Context names the failing parameters of a validation error, one
	// entry each; it is an empty object for other errors.
	Context map[string][]contextEntry `json:"context"`
}

type contextEntry struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

// errorResponse is the one place that maps errors to HTTP statuses and
// marketstack error codes, for the API version v the request named (the
// two versions' error tables differ in a code or two; an entry's v2Code
// says where). internal reports an error nobody anticipated, which is
// logged and answered without detail.
func errorResponse(err error, v apiVersion) (status int, body errorObject, internal bool) {
	body.Context = map[string][]contextEntry{}
	var ve *fielderr.List
	if errors.As(err, &ve) {
		for _, p := range ve.Fields {
			body.Context[p.Name] = []contextEntry{{Key: p.Key, Message: p.Message}}
		}
		return http.StatusUnprocessableEntity, errorObject{"validation_error", "Request failed with validation error", body.Context}, false
	}
	var dm *datasetMissingError
	if errors.As(err, &dm) {
		return http.StatusForbidden, errorObject{"function_access_restricted",
			"This API function is not available: its dataset (" + dm.dataset + ") is not loaded on this service.", body.Context}, false
	}
	// The anticipated errors with their status, marketstack code (v2Code
	// when v2 names it otherwise) and message, tried in order: the first
	// one err is wins.
	known := [...]struct {
		err                   error
		status                int
		code, message, v2Code string
	}{
		{marketdata.ErrNoValidSymbols, http.StatusUnprocessableEntity, "no_valid_symbols_provided", "None of the requested symbols is known.", ""},
		{marketdata.ErrNotFound, http.StatusNotFound, "404_not_found", "The requested resource does not exist.", ""},
		{errUnknownFunction, http.StatusNotFound, "invalid_api_function", "This API function does not exist.", ""},
		{errMethodNotAllowed, http.StatusMethodNotAllowed, "invalid_api_function", "This API function does not accept this HTTP method.", ""},
		{auth.ErrMissingKey, http.StatusUnauthorized, "missing_access_key", "You have not supplied an API Access Key.", ""},
		{auth.ErrInvalidKey, http.StatusUnauthorized, "invalid_access_key", "You have not supplied a valid API Access Key.", ""},
		{auth.ErrThrottled, http.StatusTooManyRequests, "rate_limit_reached", "Too many requests with invalid access keys came from your address; retry after the time in Retry-After.", ""},
		{errIntradayRestricted, http.StatusForbidden, "function_access_restricted", "Your current subscription plan does not support access to this API function (intraday).", ""},
		{errFunctionForbidden, http.StatusForbidden, "function_access_restricted", "Your API key is not allowed to use this API function.", ""},
		{ratelimit.ErrRateLimited, http.StatusTooManyRequests, "rate_limit_reached", "You have exceeded the rate limit of your API key.", ""},
		{ratelimit.ErrUsageLimited, http.StatusTooManyRequests, "usage_limit_reached", "You have used up the monthly request quota of your API key.", "too_many_requests"},
		{marketdata.ErrTimeout, http.StatusServiceUnavailable, "service_unavailable", "The request took too long; retry shortly.", ""},
		{context.DeadlineExceeded, http.StatusServiceUnavailable, "service_unavailable", "The request took too long; retry shortly.", ""},
		{marketdata.ErrUnavailable, http.StatusServiceUnavailable, "service_unavailable", "The service is temporarily unavailable; retry shortly.", ""},
		{context.Canceled, http.StatusServiceUnavailable, "service_unavailable", "The service is temporarily unavailable; retry shortly.", ""},
	}
	for _, k := range known {
		if errors.Is(err, k.err) {
			code := k.code
			if v == v2 && k.v2Code != "" {
				code = k.v2Code
			}
			return k.status, errorObject{code, k.message, body.Context}, false
		}
	}
	return http.StatusInternalServerError, errorObject{"internal_error", "An internal error occurred.", body.Context}, true
}

// writeError answers err in marketstack's error shape and logs unexpected
// errors once, with the request id.
func (s *Server) writeError(c *gin.Context, err error) {
	status, obj, internal := errorResponse(err, versionOf(c.Request.URL.Path))
	if internal && !errors.Is(err, recovery.ErrPanic) { // a panic is logged with its stack already
		s.o.Logger.LogAttrs(c.Request.Context(), slog.LevelError, "request failed",
			slog.String("request_id", httpedge.RequestIDOf(c)), slog.String("route", c.FullPath()), slog.String("err", err.Error()))
	} else if status == http.StatusServiceUnavailable && !errors.Is(err, context.Canceled) {
		s.o.Logger.LogAttrs(c.Request.Context(), slog.LevelWarn, "store unavailable",
			slog.String("request_id", httpedge.RequestIDOf(c)), slog.String("err", err.Error()))
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(1))
	}
	var throttled *auth.ThrottledError
	if errors.As(err, &throttled) {
		h.Set("Retry-After", strconv.Itoa(int(throttled.RetryAfter.Seconds()+0.999)))
	}
	c.Abort()
	c.JSON(status, errorBody{Error: obj})
}

// versionOf is the API version a request path names; paths outside /v2
// (the probes, the documents, /v1) answer in v1's table.
func versionOf(path string) apiVersion {
	if path == "/v2" || strings.HasPrefix(path, "/v2/") {
		return v2
	}
	return v1
}
