package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
)

type statusJSON struct {
	Status string `json:"status"`
}

// healthz is liveness: the process answers. It touches no database, so a
// database outage never gets the process restarted.
func (s *Server) healthz(c *gin.Context) { writeJSON(c, http.StatusOK, statusJSON{Status: "ok"}) }

// readyz is readiness: false while shutting down or when the database does
// not answer within a second.
func (s *Server) readyz(c *gin.Context) {
	if s.ShuttingDown() {
		s.notReady(c, errors.New("shutting down"))
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
	defer cancel()
	if err := s.ping(ctx); err != nil {
		s.notReady(c, err)
		return
	}
	writeJSON(c, http.StatusOK, statusJSON{Status: "ready"})
}

func (s *Server) notReady(c *gin.Context, cause error) {
	s.log.Warn("not ready", "request_id", httpedge.RequestIDOf(c), "error", cause.Error())
	p := problem{Type: problemTypeBase + "not-ready", Title: "Not ready", Status: http.StatusServiceUnavailable,
		Detail: "The service is shutting down or cannot reach its database.", RequestID: httpedge.RequestIDOf(c), Instance: c.Request.URL.Path}
	c.Header("Retry-After", "1")
	writeProblem(c, p)
}
