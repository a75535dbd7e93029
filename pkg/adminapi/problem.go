package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// requestError is an answer the API chooses itself, with its status,
// problem type and text.
type requestError struct {
	status              int
	slug, title, detail string
}

func (e *requestError) Error() string { return e.detail }

var (
	errNoRoute  = &requestError{http.StatusNotFound, "not-found", "Not found", "no such admin route"}
	errNoMethod = &requestError{http.StatusMethodNotAllowed, "method-not-allowed", "Method not allowed", "the route does not take this method"}
	errNoToken  = &requestError{http.StatusUnauthorized, "unauthorized", "Unauthorized", "an admin token is required: Authorization: Bearer <token>"}
	errBadToken = &requestError{http.StatusUnauthorized, "unauthorized", "Unauthorized", "the admin token is not valid"}
)

func badRequest(detail string) error {
	return &requestError{http.StatusBadRequest, "bad-request", "Bad request", detail}
}

func invalid(detail string) error {
	return &requestError{http.StatusUnprocessableEntity, "invalid", "Invalid request", detail}
}

// fail answers err as a problem: the API's own errors and the store's
// domain errors with their status, anything else a generic 500, logged
// once with its cause.
func (s *server) fail(c *gin.Context, err error) {
	var re *requestError
	switch {
	case errors.As(err, &re):
	case errors.Is(err, keystore.ErrInvalid):
		re = invalid(storeDetail(err, keystore.ErrInvalid)).(*requestError)
	case errors.Is(err, keystore.ErrAccountNotFound):
		re = &requestError{http.StatusNotFound, "not-found", "Not found", "no such account"}
	case errors.Is(err, keystore.ErrKeyNotFound):
		re = &requestError{http.StatusNotFound, "not-found", "Not found", "no such key"}
	case errors.Is(err, keystore.ErrAccountExists):
		re = &requestError{http.StatusConflict, "account-exists", "Account exists", "an account of that name exists"}
	case errors.Is(err, keystore.ErrKeyLimit):
		re = &requestError{http.StatusConflict, "key-limit", "Too many live keys", storeDetail(err, keystore.ErrKeyLimit)}
	case errors.Is(err, keystore.ErrKeyNotLive):
		re = &requestError{http.StatusConflict, "key-not-live", "Key not live", "the key is revoked or expired: only a live key can be rolled"}
	case slices.Contains([]postgres.Class{postgres.Timeout, postgres.Unavailable, postgres.Conflict}, postgres.Classify(err)):
		// The database timed out (a lock wait included: concurrent changes
		// of one key queue on its row), is out of reach, or a transaction
		// lost to another: a retry may succeed, and a 500 would say the
		// request itself is at fault.
		s.o.Log.Warn("admin api: database busy or unavailable", "path", c.FullPath(), "error", err.Error())
		c.Header("Retry-After", "1")
		re = &requestError{http.StatusServiceUnavailable, "unavailable", "Service unavailable",
			"the database is busy or unavailable: retry shortly"}
	default:
		s.o.Log.Error("admin api", "path", c.FullPath(), "error", err.Error())
		re = &requestError{http.StatusInternalServerError, "internal", "Internal error", ""}
	}
	body, _ := json.Marshal(problem{Type: problemTypeBase + re.slug, Title: re.title, Status: re.status, Detail: re.detail})
	c.Header("Cache-Control", "no-store")
	c.Abort()
	c.Data(re.status, "application/problem+json", body)
}

// storeDetail is the store's message after its sentinel: what is wrong,
// without the labels of the calls it went through.
func storeDetail(err, sentinel error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, sentinel.Error()+": "); i >= 0 {
		return msg[i+len(sentinel.Error())+2:]
	}
	return sentinel.Error()
}
