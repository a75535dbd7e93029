package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

// Store keeps endpoints and deliveries; every method is scoped to
// accountID, and another account's rows are ErrNotFound.
type Store interface {
	// CreateEndpoint inserts e unless its account already has max
	// endpoints (ErrTooManyEndpoints).
	CreateEndpoint(ctx context.Context, e Endpoint, max int) error
	ListEndpoints(ctx context.Context, accountID string) ([]Endpoint, error)
	GetEndpoint(ctx context.Context, accountID, id string) (Endpoint, error)
	// UpdateEndpoint reads the endpoint, lets change edit it and writes
	// it back, in one transaction.
	UpdateEndpoint(ctx context.Context, accountID, id string, change func(*Endpoint) error) (Endpoint, error)
	DeleteEndpoint(ctx context.Context, accountID, id string) error
	// ListDeliveries returns a page of the endpoint's deliveries, newest
	// first, and how many it has; limit 0 means all.
	ListDeliveries(ctx context.Context, accountID, endpointID string, limit, offset int) ([]Delivery, int64, error)
}

// URLChecker refuses an endpoint URL the service may not call; its error
// is worded for the client (internal/webhook/egress).
type URLChecker interface {
	CheckURL(ctx context.Context, raw string) error
}

// Redeliverer sends a delivery again (internal/webhook/delivery).
type Redeliverer interface {
	Redeliver(ctx context.Context, accountID, endpointID, deliveryID string) error
}

// Service manages an account's endpoints and their delivery log.
type Service struct {
	store   Store
	cipher  *Cipher
	urls    URLChecker
	resend  Redeliverer
	now     func() time.Time
	overlap time.Duration
}

// Options wire a Service. Cipher may be nil (secrets stored unsealed).
type Options struct {
	Store       Store
	Cipher      *Cipher
	URLs        URLChecker
	Redeliverer Redeliverer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewService returns a Service for o; Store, URLs and Redeliverer are
// required.
func NewService(o Options) (*Service, error) {
	if o.Store == nil || o.URLs == nil || o.Redeliverer == nil {
		return nil, errors.New("new webhook service: Store, URLs and Redeliverer are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{store: o.Store, cipher: o.Cipher, urls: o.URLs, resend: o.Redeliverer, now: o.Now, overlap: RotationOverlap}, nil
}

// Draft is a new endpoint as a client sends it; Enabled nil means true.
type Draft struct {
	URL     string
	Types   []string
	Enabled *bool
}

// Patch is a partial update of an endpoint; nil fields stay.
type Patch struct {
	URL     *string
	Types   *[]string
	Enabled *bool
}

// checkTypes validates and normalizes event types: known, no duplicates,
// never nil.
func checkTypes(types []string, verr *fielderr.List) []string {
	out := []string{}
	known := EventTypes()
	for _, t := range types {
		t = strings.TrimSpace(t)
		if !slices.Contains(known, t) {
			verr.Add("types", fmt.Sprintf("%q is not an event type; the types are %s", t, strings.Join(known, ", ")))
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (s *Service) checkURL(ctx context.Context, raw string, verr *fielderr.List) string {
	raw = strings.TrimSpace(raw)
	if err := s.urls.CheckURL(ctx, raw); err != nil {
		verr.Add("url", err.Error())
	}
	return raw
}

// Create registers an endpoint and returns it with its secret, which is
// shown this once.
func (s *Service) Create(ctx context.Context, accountID string, d Draft) (Endpoint, string, error) {
	var verr fielderr.List
	e := Endpoint{AccountID: accountID, Enabled: true}
	e.URL = s.checkURL(ctx, d.URL, &verr)
	e.Types = checkTypes(d.Types, &verr)
	if d.Enabled != nil {
		e.Enabled = *d.Enabled
	}
	if err := verr.Err(); err != nil {
		return Endpoint{}, "", err
	}
	id, err := notes.NewPrefixedID(EndpointIDPrefix)
	if err != nil {
		return Endpoint{}, "", err
	}
	e.ID = id
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	if e.Secret, err = s.cipher.Seal(secret, e.ID); err != nil {
		return Endpoint{}, "", err
	}
	e.CreatedAt = s.now().UTC().Truncate(time.Microsecond)
	e.UpdatedAt = e.CreatedAt
	if err := s.store.CreateEndpoint(ctx, e, MaxEndpoints); err != nil {
		return Endpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	return e, secret, nil
}

// List returns the account's endpoints, oldest first.
func (s *Service) List(ctx context.Context, accountID string) ([]Endpoint, error) {
	out, err := s.store.ListEndpoints(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

// Get returns one endpoint of the account.
func (s *Service) Get(ctx context.Context, accountID, id string) (Endpoint, error) {
	if !validID(id, EndpointIDPrefix) {
		return Endpoint{}, ErrNotFound
	}
	e, err := s.store.GetEndpoint(ctx, accountID, id)
	if err != nil {
		return Endpoint{}, fmt.Errorf("get webhook endpoint: %w", err)
	}
	return e, nil
}

// Update applies p. Enabling an endpoint clears the reason it was
// disabled for.
func (s *Service) Update(ctx context.Context, accountID, id string, p Patch) (Endpoint, error) {
	if !validID(id, EndpointIDPrefix) {
		return Endpoint{}, ErrNotFound
	}
	var verr fielderr.List
	var url string
	var types []string
	if p.URL != nil {
		url = s.checkURL(ctx, *p.URL, &verr)
	}
	if p.Types != nil {
		types = checkTypes(*p.Types, &verr)
	}
	if err := verr.Err(); err != nil {
		return Endpoint{}, err
	}
	e, err := s.store.UpdateEndpoint(ctx, accountID, id, func(e *Endpoint) error {
		if p.URL != nil {
			e.URL = url
		}
		if p.Types != nil {
			e.Types = types
		}
		if p.Enabled != nil {
			e.Enabled = *p.Enabled
			if e.Enabled {
				e.DisabledReason = ""
			}
		}
		e.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
		return nil
	})
	if err != nil {
		return Endpoint{}, fmt.Errorf("update webhook endpoint: %w", err)
	}
	return e, nil
}

// Delete removes an endpoint and its delivery log; deliveries still
// queued find no endpoint and end.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	if !validID(id, EndpointIDPrefix) {
		return ErrNotFound
	}
	if err := s.store.DeleteEndpoint(ctx, accountID, id); err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	return nil
}

// RotateSecret gives the endpoint a new secret, returned this once; the
// old one keeps signing for RotationOverlap.
func (s *Service) RotateSecret(ctx context.Context, accountID, id string) (Endpoint, string, error) {
	if !validID(id, EndpointIDPrefix) {
		return Endpoint{}, "", ErrNotFound
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	e, err := s.store.UpdateEndpoint(ctx, accountID, id, func(e *Endpoint) error {
		sealed, err := s.cipher.Seal(secret, e.ID)
		if err != nil {
			return err
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		until := now.Add(s.overlap)
		e.PreviousSecret, e.PreviousExpiresAt = e.Secret, &until
		e.Secret, e.UpdatedAt = sealed, now
		return nil
	})
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("rotate webhook secret: %w", err)
	}
	return e, secret, nil
}

// OpenSecrets returns the secrets that sign a delivery to e at now: the
// current one, and the previous one within its overlap.
func OpenSecrets(c *Cipher, e Endpoint, now time.Time) ([]string, error) {
	cur, err := c.Open(e.Secret, e.ID)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if e.PreviousSecret != nil && e.PreviousExpiresAt != nil && now.Before(*e.PreviousExpiresAt) {
		prev, err := c.Open(e.PreviousSecret, e.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// Deliveries returns a page of an endpoint's deliveries, newest first,
// and their number.
func (s *Service) Deliveries(ctx context.Context, accountID, endpointID string, limit, offset int) ([]Delivery, int64, error) {
	if !validID(endpointID, EndpointIDPrefix) {
		return nil, 0, ErrNotFound
	}
	out, total, err := s.store.ListDeliveries(ctx, accountID, endpointID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return out, total, nil
}

// Retry sends a delivery again, whatever its status.
func (s *Service) Retry(ctx context.Context, accountID, endpointID, deliveryID string) error {
	if !validID(endpointID, EndpointIDPrefix) || !validID(deliveryID, DeliveryIDPrefix) {
		return ErrNotFound
	}
	if err := s.resend.Redeliver(ctx, accountID, endpointID, deliveryID); err != nil {
		return fmt.Errorf("retry webhook delivery: %w", err)
	}
	return nil
}

// validID reports whether id could name a row: the prefix and up to 64
// characters of [0-9A-Za-z], so that junk costs no query.
func validID(id, prefix string) bool {
	body, ok := strings.CutPrefix(id, prefix)
	if !ok || body == "" || len(body) > 64 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
