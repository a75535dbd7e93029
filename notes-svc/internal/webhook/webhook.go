// Package webhook is the webhooks domain of notes-svc: the endpoints an
// account registers, the deliveries of its events to them, their
// validation, the sealing of their secrets and the signature every
// delivery carries. It holds no HTTP server and no SQL: the service works
// on the Store it declares, and checks endpoint URLs through a URLChecker
// (internal/webhook/egress).
package webhook

import (
	"errors"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// MaxEndpoints is how many endpoints one account may have, as Stripe caps
// them.
const MaxEndpoints = 16

// MaxURLLen bounds an endpoint URL.
const MaxURLLen = 2048

// RotationOverlap is how long the previous secret stays valid after a
// rotation; deliveries carry a signature by each meanwhile.
const RotationOverlap = 24 * time.Hour

// ID prefixes.
const (
	EndpointIDPrefix = "we_"
	DeliveryIDPrefix = "whd_"
	SecretPrefix     = "whsec_"
)

// The event types of notes, which endpoints may subscribe to, and the
// type of the event appended when an endpoint is disabled.
// The event log's, named once in the notes domain.
const TypeEndpointDisabled = notes.EventWebhookEndpointDisabled

// EventTypes are the types an endpoint may list, in the order documented.
func EventTypes() []string { return notes.NoteEventTypes() }

// Domain errors. The database's own failures are the notes domain's, so
// that the service's one error mapping words them once.
var (
	// ErrNotFound is an endpoint or delivery that does not exist in the
	// account, including another account's.
	ErrNotFound = errors.New("webhook endpoint or delivery not found")
	// ErrTooManyEndpoints refuses an endpoint over MaxEndpoints.
	ErrTooManyEndpoints = errors.New("too many webhook endpoints")
	// ErrNoSecretKey is a secret sealed under a key the service lacks.
	ErrNoSecretKey = errors.New("webhook secret sealed under another key")

	ErrUnavailable = notes.ErrUnavailable
	ErrTimeout     = notes.ErrTimeout
	ErrConflict    = notes.ErrConflict
)

// Endpoint is a URL that receives an account's events. Its columns are
// GORM's default names for its fields (snake case: AccountID is
// account_id), so the model is the one mapping to its row; Types alone
// needs a tag, for its JSON serializer.
type Endpoint struct {
	ID, AccountID, URL string
	// Types are the event types sent; empty means all of them. Never nil,
	// so that the column holds [] and not null.
	Types []string `gorm:"serializer:json"`
	// DisabledReason says why the service disabled the endpoint.
	Enabled        bool
	DisabledReason string
	// Secret and PreviousSecret are sealed (Cipher); PreviousSecret signs
	// too until PreviousExpiresAt.
	Secret, PreviousSecret []byte
	PreviousExpiresAt      *time.Time
	CreatedAt, UpdatedAt   time.Time
}

// TableName implements GORM's schema.Tabler.
func (Endpoint) TableName() string { return "webhook_endpoints" }

// Wants reports whether the endpoint receives events of type typ.
func (e Endpoint) Wants(typ string) bool {
	if len(e.Types) == 0 {
		return true
	}
	for _, t := range e.Types {
		if t == typ {
			return true
		}
	}
	return false
}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Delivery is one event sent to one endpoint, with the outcome of its
// last attempt; its columns are GORM's default names, as Endpoint's.
type Delivery struct {
	ID, AccountID, EndpointID string
	EventSeq                  int64
	EventID, EventType        string
	Status                    string
	Attempts                  int
	// LastStatus is nil before an answer, or when none came.
	LastStatus, LastLatencyMS *int
	LastError                 string
	NextAttemptAt             *time.Time
	CreatedAt, UpdatedAt      time.Time
}

// TableName implements GORM's schema.Tabler.
func (Delivery) TableName() string { return "webhook_deliveries" }
