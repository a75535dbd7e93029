package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrNotAnEvent is a body that is not an event: not JSON, or without an
// id or a type.
var ErrNotAnEvent = errors.New("webhook: body is not an event")

// Event is a delivery's body: the event as GET /v1/events lists it.
type Event struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      EventData `json:"data"`
}

// EventData holds what the event is about.
type EventData struct {
	// Object is the note (or webhook endpoint) as the API writes it; for
	// note.deleted, only its id.
	Object json.RawMessage `json:"object"`
}

// ObjectID is the id of the event's object, "" when it has none.
func (e Event) ObjectID() string {
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(e.Data.Object, &o) != nil {
		return ""
	}
	return o.ID
}

// ParseEvent reads a delivery's raw body. It checks no signature: a
// receiver calls ConstructEvent, which verifies the body first.
func ParseEvent(body []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrNotAnEvent, err)
	}
	if ev.ID == "" || ev.Type == "" {
		return Event{}, ErrNotAnEvent
	}
	return ev, nil
}

// ConstructEvent verifies a delivery (Verify: header is its
// Tickerdesk-Signature, body its raw body) and returns its event.
func ConstructEvent(body []byte, header, secret string, tolerance time.Duration) (Event, error) {
	if err := Verify(secret, header, body, tolerance); err != nil {
		return Event{}, err
	}
	return ParseEvent(body)
}

// MaxBodyBytes bounds the body ReadEvent reads; notes-svc's events are
// far smaller.
const MaxBodyBytes = 1 << 20

// ReadEvent is a receiver's whole check of a delivery: it reads r's raw
// body (at most MaxBodyBytes), verifies it under secret (Verify) and
// returns its event.
func ReadEvent(r *http.Request, secret string, tolerance time.Duration) (Event, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes))
	if err != nil {
		return Event{}, fmt.Errorf("webhook: read body: %w", err)
	}
	return ConstructEvent(body, r.Header.Get(SignatureHeader), secret, tolerance)
}
