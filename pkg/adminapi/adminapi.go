// Package adminapi is the admin API both services serve on a listener of
// their own (NOTES_ADMIN_ADDR, MARKETDATA_ADMIN_ADDR), never on the public
// one: accounts, keys, their rotation ("roll": a successor, the old key
// working on for a bounded grace), revocation, and the audit trail, all
// through pkg/keystore, the store the keys command uses too.
//
// Callers are systems (signup, billing) holding an admin token from a
// token file (Tokens); the token's name, never the token, is what the
// audit trail records. Errors are RFC 9457 problem details in both
// services: this is one API of its own, documented by its own OpenAPI
// document (openapi.yaml), served at /admin/v1/openapi.json with the
// /docs page of pkg/apidocs.
package adminapi

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tickerdesk/tickerdesk/pkg/apidocs"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// MaxBodyBytes bounds a request body: the largest legitimate one, a key
// with every scope and a long name, is well under a kilobyte.
const MaxBodyBytes = 16 << 10

// DefaultRollGrace is how long a rolled key keeps working when the roll
// names no expires_in.
const DefaultRollGrace = 24 * time.Hour

// problemTypeBase prefixes every problem type; docs/ADMIN.md lists them.
const problemTypeBase = "https://tickerdesk.dev/problems/admin/"

//go:embed openapi.yaml
var openAPIYAML []byte

// Options configure the admin API of one service.
type Options struct {
	// Service names the service in the /docs page's title.
	Service string
	Store   *keystore.Store
	Tokens  *Tokens
	// Limits accepts rate_per_second and monthly_quota on new keys and
	// shows them on keys (marketdata-svc's per-key limits).
	Limits bool
	// Metrics are the service's admin metrics (NewMetrics); when nil,
	// New registers them on Registry under Namespace (e.g. "notes").
	Metrics   *Metrics
	Namespace string
	Registry  prometheus.Registerer
	// Changed, when set, is called with a key's id once its revocation or
	// roll has committed, to drop it from the auth caches.
	Changed func(keyID string)
	Log     *slog.Logger
}

type server struct {
	o       Options
	openapi []byte
	metrics *Metrics
}

// New returns the admin API's handler.
func New(o Options) (http.Handler, error) {
	if o.Store == nil || o.Tokens == nil || o.Log == nil || (o.Metrics == nil && (o.Registry == nil || o.Namespace == "")) {
		return nil, errors.New("admin api: store, tokens, log and metrics (or a registry and namespace) are required")
	}
	doc, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("admin api: openapi: %w", err)
	}
	m := o.Metrics
	if m == nil {
		if m, err = NewMetrics(o.Registry, o.Namespace, o.Store); err != nil {
			return nil, fmt.Errorf("admin api: %w", err)
		}
	}
	s := &server{o: o, openapi: doc, metrics: m}
	docs, err := apidocs.New(o.Service+" admin API reference", func(c *gin.Context) { s.fail(c, errNoRoute) },
		apidocs.Document{Name: "admin v1", URL: "/admin/v1/openapi.json"})
	if err != nil {
		return nil, fmt.Errorf("admin api: %w", err)
	}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.Use(s.recover, s.count)
	e.NoRoute(func(c *gin.Context) { s.fail(c, errNoRoute) })
	e.NoMethod(func(c *gin.Context) { s.fail(c, errNoMethod) })
	e.GET("/docs", docs.Page)
	e.GET("/docs/*asset", docs.Asset)
	e.GET("/admin/v1/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", s.openapi) })
	a := e.Group("/admin/v1", s.authenticate)
	a.POST("/accounts", s.createAccount)
	a.GET("/accounts/:id", s.getAccount)
	a.POST("/accounts/:id/keys", s.createKey)
	a.GET("/accounts/:id/keys", s.listKeys)
	a.POST("/keys/:id/roll", s.rollKey)
	a.DELETE("/keys/:id", s.revokeKey)
	a.GET("/audit", s.audit)
	return e, nil
}

// actorKey holds the store acting as the caller's token in the context.
const actorKey = "adminapi.store"

// authenticate admits a request with a configured admin token: anything
// else, an API key of the service included, is a 401.
func (s *server) authenticate(c *gin.Context) {
	token, present := auth.BearerHeader()(c.Request)
	if !present || token == "" {
		c.Header("WWW-Authenticate", `Bearer realm="admin"`)
		s.fail(c, errNoToken)
		return
	}
	name, ok := s.o.Tokens.Match(token)
	if !ok {
		c.Header("WWW-Authenticate", `Bearer realm="admin", error="invalid_token"`)
		s.fail(c, errBadToken)
		return
	}
	c.Set(actorKey, s.o.Store.As(name))
	// Bodies are bounded before any handler reads one.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
	c.Next()
}

func (s *server) store(c *gin.Context) *keystore.Store { return c.MustGet(actorKey).(*keystore.Store) }

// count records each request's outcome.
func (s *server) count(c *gin.Context) {
	c.Next()
	outcome := "ok"
	switch st := c.Writer.Status(); {
	case st == http.StatusUnauthorized:
		outcome = "unauthorized"
	case st >= 500:
		outcome = "server_error"
	case st >= 400:
		outcome = "client_error"
	}
	s.metrics.requests.WithLabelValues(outcome).Inc()
}

// recover turns a panic into a logged 500.
func (s *server) recover(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.o.Log.Error("admin api panic", "path", c.FullPath(), "panic", fmt.Sprint(r))
			s.fail(c, errors.New("panic"))
		}
	}()
	c.Next()
}

// accountView is an account as the API shows it.
type accountView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// keyView is a key as the API shows it; Secret only in the answer that
// created it.
type keyView struct {
	ID            string     `json:"id"`
	AccountID     string     `json:"account_id"`
	Name          string     `json:"name"`
	Hint          string     `json:"hint"`
	Scopes        []string   `json:"scopes"`
	RatePerSecond *int       `json:"rate_per_second,omitempty"`
	MonthlyQuota  *int64     `json:"monthly_quota,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     *time.Time `json:"expires_at"`
	RevokedAt     *time.Time `json:"revoked_at"`
	LastUsedAt    *time.Time `json:"last_used_at"`
	Secret        string     `json:"secret,omitempty"`
}

func (s *server) keyView(k keystore.Key, secret string) keyView {
	v := keyView{ID: k.ID, AccountID: k.AccountID, Name: k.Name, Hint: k.Hint, Scopes: k.Scopes, CreatedAt: k.CreatedAt,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt, Secret: secret}
	if s.o.Limits {
		v.RatePerSecond, v.MonthlyQuota = &k.RatePerSecond, &k.MonthlyQuota
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	return v
}

func (s *server) createAccount(c *gin.Context) {
	var in struct {
		Name *string `json:"name"`
	}
	if !s.decode(c, &in, false) {
		return
	}
	if in.Name == nil {
		s.fail(c, invalid("name is required"))
		return
	}
	a, err := s.store(c).CreateAccount(c.Request.Context(), *in.Name)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, accountView(a))
}

func (s *server) getAccount(c *gin.Context) {
	a, err := s.o.Store.GetAccount(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, accountView(a))
}

func (s *server) createKey(c *gin.Context) {
	var in struct {
		Name          string    `json:"name"`
		Scopes        *[]string `json:"scopes"`
		ExpiresAt     *string   `json:"expires_at"`
		RatePerSecond *int      `json:"rate_per_second"`
		MonthlyQuota  *int64    `json:"monthly_quota"`
	}
	if !s.decode(c, &in, true) {
		return
	}
	o := keystore.KeyOptions{Name: in.Name}
	if in.Scopes != nil {
		o.Scopes = *in.Scopes
		if o.Scopes == nil {
			o.Scopes = []string{}
		}
	}
	if !s.o.Limits && (in.RatePerSecond != nil || in.MonthlyQuota != nil) {
		s.fail(c, invalid("this service's keys have no per-key limits: rate_per_second and monthly_quota are not taken"))
		return
	}
	if in.RatePerSecond != nil {
		o.RatePerSecond = *in.RatePerSecond
	}
	if in.MonthlyQuota != nil {
		o.MonthlyQuota = *in.MonthlyQuota
	}
	if in.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339, *in.ExpiresAt)
		if err != nil {
			s.fail(c, invalid("expires_at must be an RFC 3339 time such as 2030-01-02T15:04:05Z"))
			return
		}
		if !t.After(time.Now()) {
			s.fail(c, invalid("expires_at is not in the future"))
			return
		}
		if err := auth.CheckKeyLifetime(time.Until(t)); err != nil {
			s.fail(c, invalid("expires_at: the lifetime "+err.Error()))
			return
		}
		o.ExpiresAt = t
	}
	k, plain, err := s.store(c).IssueKey(c.Request.Context(), c.Param("id"), o)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.metrics.created.Inc()
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, s.keyView(k, plain))
}

func (s *server) listKeys(c *gin.Context) {
	a, err := s.o.Store.GetAccount(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	keys, err := s.o.Store.ListKeys(c.Request.Context(), a.Name)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]keyView, len(keys))
	for i, k := range keys {
		out[i] = s.keyView(k, "")
	}
	c.JSON(http.StatusOK, gin.H{"data": out})
}

func (s *server) rollKey(c *gin.Context) {
	var in struct {
		ExpiresIn *string `json:"expires_in"`
	}
	if !s.decode(c, &in, true) {
		return
	}
	grace := DefaultRollGrace
	if in.ExpiresIn != nil {
		d, err := time.ParseDuration(*in.ExpiresIn)
		if err != nil || d < 0 || d > keystore.MaxRollGrace {
			s.fail(c, invalid(fmt.Sprintf("expires_in must be a duration such as 24h, between 0s and %s", keystore.MaxRollGrace)))
			return
		}
		grace = d
	}
	r, plain, err := s.store(c).RollKey(c.Request.Context(), c.Param("id"), grace)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.changed(r.Old.ID)
	s.metrics.rolled.Inc()
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, gin.H{"old": s.keyView(r.Old, ""), "new": s.keyView(r.New, plain)})
}

func (s *server) revokeKey(c *gin.Context) {
	id := c.Param("id")
	if err := s.store(c).RevokeKey(c.Request.Context(), id, time.Now()); err != nil {
		s.fail(c, err)
		return
	}
	s.changed(id)
	s.metrics.revoked.Inc()
	c.Status(http.StatusNoContent)
}

func (s *server) changed(id string) {
	if s.o.Changed != nil {
		s.o.Changed(id)
	}
}

func (s *server) audit(c *gin.Context) {
	after, limit := int64(0), 100
	if v := c.Query("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.fail(c, badRequest("after must be the id of an audit entry, a whole number"))
			return
		}
		after = n
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > keystore.MaxAuditPage {
			s.fail(c, badRequest(fmt.Sprintf("limit must be between 1 and %d", keystore.MaxAuditPage)))
			return
		}
		limit = n
	}
	rows, err := s.o.Store.Audit(c.Request.Context(), after, limit)
	if err != nil {
		s.fail(c, err)
		return
	}
	if rows == nil {
		rows = []keystore.AuditEntry{}
	}
	next := after
	if len(rows) > 0 {
		next = rows[len(rows)-1].ID
	}
	c.JSON(http.StatusOK, gin.H{"data": rows, "next_after": next})
}

// decode reads the request's JSON body into v: one object, no unknown
// member. An empty body is an empty object when emptyOK.
func (s *server) decode(c *gin.Context, v any, emptyOK bool) bool {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(c, &requestError{status: http.StatusRequestEntityTooLarge, slug: "too-large", title: "Request body too large",
				detail: fmt.Sprintf("the body exceeds %d bytes", MaxBodyBytes)})
			return false
		}
		s.fail(c, badRequest("the body could not be read"))
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 && emptyOK {
		return true
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.fail(c, badRequest("the body must be one JSON object of the documented members: "+jsonProblem(err)))
		return false
	}
	if dec.More() {
		s.fail(c, badRequest("the body must be one JSON object, with nothing after it"))
		return false
	}
	return true
}

// jsonProblem says what is wrong with a body without echoing it.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return "member " + typeErr.Field + " has the wrong type"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown member " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "malformed JSON"
}
