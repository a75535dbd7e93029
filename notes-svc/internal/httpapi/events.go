package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// eventJSON is an event as the feed shows it; data is {"object": ...}
// as the log holds it.
type eventJSON struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// eventPage is a page of the feed: its events, the cursor to send next
// time (the last event's, or the one sent when the page is empty), and
// whether more events follow at once.
type eventPage struct {
	Data       []eventJSON `json:"data"`
	NextCursor string      `json:"next_cursor"`
	HasMore    bool        `json:"has_more"`
}

// listEvents answers a page of the account's event feed, oldest first.
func (s *Server) listEvents(c *gin.Context) {
	q, err := eventQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, err)
		return
	}
	evs, more, err := s.notes.Events(c.Request.Context(), accountOf(c), q)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := eventPage{Data: make([]eventJSON, len(evs)), NextCursor: notes.EncodeEventCursor(q.After), HasMore: more}
	for i, ev := range evs {
		out.Data[i] = eventJSON{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC().Format(timeFormat), Data: ev.Data}
	}
	if len(evs) > 0 {
		out.NextCursor = notes.EncodeEventCursor(evs[len(evs)-1].Seq)
	}
	writeJSON(c, http.StatusOK, out)
}

// eventQuery reads the feed's parameters: after (a cursor of the feed),
// limit and types (event types, comma-separated or repeated).
func eventQuery(raw string) (notes.EventQuery, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return notes.EventQuery{}, &requestError{status: http.StatusBadRequest, field: "query",
			detail: "the query string is malformed (bad percent-encoding or a semicolon)"}
	}
	var fields fielderr.List
	page, err := pagination.Parse(pagination.Values(q), pagination.Bounds{DefaultLimit: notes.DefaultEventLimit, MaxLimit: notes.MaxEventLimit})
	var perr *fielderr.List
	if errors.As(err, &perr) {
		fields.Fields = append(fields.Fields, perr.Fields...)
	}
	if q.Has("offset") {
		fields.Add("offset", "is not a parameter of the event feed; page with after")
	}
	types, err := notes.ParseEventTypes(q["types"])
	if err != nil {
		fields.Add("types", err.Error())
	}
	if err := fields.Err(); err != nil {
		return notes.EventQuery{}, err
	}
	out := notes.EventQuery{Limit: page.Limit, Types: types}
	switch after := q["after"]; {
	case len(after) > 1:
		return notes.EventQuery{}, &notes.ParamError{Field: fielderr.Field{Name: "after", Message: "must be given at most once"}}
	case len(after) == 1:
		seq, err := notes.DecodeEventCursor(strings.TrimSpace(after[0]))
		if err != nil {
			return notes.EventQuery{}, &notes.ParamError{Field: fielderr.Field{Name: "after", Message: err.Error()}}
		}
		out.After = seq
	}
	return out, nil
}

// moveNote is the handler of trash or restore (the Service's Trash or
// Restore): it answers the note, as it is when it already was where it
// was sent.
func (s *Server) moveNote(move func(ctx context.Context, accountID, id string) (notes.Note, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := move(c.Request.Context(), accountOf(c), c.Param("id"))
		if err != nil {
			s.fail(c, err)
			return
		}
		s.writeNote(c, http.StatusOK, n)
	}
}
