package notes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Types of Event, one per kind of change to a note, and the one the
// webhooks append when they disable an endpoint that kept failing
// (docs/API.md lists what each one's data holds).
const (
	EventNoteCreated, EventNoteUpdated, EventNoteDeleted = "note.created", "note.updated", "note.deleted"
	EventNoteTrashed, EventNoteRestored                  = "note.trashed", "note.restored"
	EventWebhookEndpointDisabled                         = "webhook_endpoint.disabled"
)

// NoteEventTypes lists the types of changes to notes, which webhook
// endpoints subscribe to.
func NoteEventTypes() []string {
	return []string{EventNoteCreated, EventNoteUpdated, EventNoteTrashed, EventNoteRestored, EventNoteDeleted}
}

// EventTypes lists every type the feed serves, for validation and
// documentation.
func EventTypes() []string { return append(NoteEventTypes(), EventWebhookEndpointDisabled) }

// ErrCursorExpired reports an event cursor older than the events kept:
// the client must resync in full (docs/API.md, Events and sync).
var ErrCursorExpired = errors.New("event cursor expired")

// Event is one change to a note of an account, written in the change's
// own transaction. Seq orders the events totally; clients see it only
// through opaque cursors. Data is {"object": ...}: the note after the
// change in the API's form, or only its id for a deletion. The gorm tags
// are the one mapping of the events table.
type Event struct {
	Seq       int64           `gorm:"column:seq;primaryKey;autoIncrement"`
	ID        string          `gorm:"column:id"`
	AccountID string          `gorm:"column:account_id"`
	Type      string          `gorm:"column:type"`
	CreatedAt time.Time       `gorm:"column:created_at;autoCreateTime:false"`
	Data      json.RawMessage `gorm:"column:data;type:jsonb"`
}

// TableName implements GORM's schema.Tabler.
func (Event) TableName() string { return "events" }

// EventIDPrefix starts every event id.
const EventIDPrefix = "evt_"

// MaxEventLimit bounds a page of the event feed; DefaultEventLimit is
// its size when none is asked.
const (
	MaxEventLimit     = 1000
	DefaultEventLimit = 100
)

// DefaultEventRetention and DefaultTrashRetention are how long events and
// trashed notes are kept unless configured.
const (
	DefaultEventRetention = 30 * 24 * time.Hour
	DefaultTrashRetention = 30 * 24 * time.Hour
)

// EventQuery selects a page of an account's event feed.
type EventQuery struct {
	// After is the seq of the last event the client has seen; 0 starts
	// at the oldest event kept.
	After int64
	// Types keeps only events of these types; empty keeps all.
	Types []string
	Limit int
	// Horizon is the creation time of the oldest event still served: the
	// service sets it from the retention.
	Horizon time.Time
}

// EventStore reads the event log. The writes append to it themselves, in
// their own transactions.
type EventStore interface {
	// ListEvents returns up to q.Limit events of accountID after q.After,
	// in seq order, only those no running transaction can still precede,
	// and whether more follow. A q.After whose event is gone or older
	// than q.Horizon is ErrCursorExpired.
	ListEvents(ctx context.Context, accountID string, q EventQuery) ([]Event, bool, error)
}

// ParseEventTypes reads a comma-separated list of event types, as
// repeated or joined parameters give it.
func ParseEventTypes(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(EventTypes(), t) {
				return nil, fmt.Errorf("must be a comma-separated list of %s", strings.Join(EventTypes(), ", "))
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
