// Package webhookdb stores webhook endpoints and their deliveries in the
// notes database (tables of migration 00008 in notesdb, which owns the
// service's one migration directory), through GORM: the gorm tags of
// webhook.Endpoint and webhook.Delivery are their one column mapping,
// every statement is scoped to its account (endpointOf, deliveryOf) and
// every driver error leaves translated into a domain error.
package webhookdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// Store implements webhook.Store, and what the delivery worker needs.
type Store struct {
	db *gorm.DB
}

var _ webhook.Store = (*Store)(nil)

// New returns a Store on db, which the caller keeps and closes.
func New(db *sql.DB) (*Store, error) {
	g, err := postgres.OpenGORM(db)
	if err != nil {
		return nil, err
	}
	return &Store{db: g}, nil
}

// DB is the store's GORM session, for transactions that span the store
// and River (the delivery package).
func (s *Store) DB() *gorm.DB { return s.db }

// endpointOf scopes a statement to the endpoint id of accountID.
func endpointOf(accountID, id string) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB { return db.Where("account_id = ? AND id = ?", accountID, id) }
}

// translate maps driver errors to domain errors as notesdb does (the
// webhook domain's database errors are the notes domain's), but a missing
// row to webhook.ErrNotFound.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) || postgres.Classify(err) == postgres.NoRows {
		return webhook.ErrNotFound
	}
	return notesdb.Translate(err)
}

// CreateEndpoint implements webhook.Store.
func (s *Store) CreateEndpoint(ctx context.Context, e webhook.Endpoint, max int) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Two creations at once must not both pass the count. Raw: an
		// advisory lock is a function call, not a table GORM could name.
		if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || ?, 0))", e.AccountID).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&webhook.Endpoint{}).Where("account_id = ?", e.AccountID).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return webhook.ErrTooManyEndpoints
		}
		return tx.Create(&e).Error
	})
	if errors.Is(err, webhook.ErrTooManyEndpoints) {
		return err
	}
	return translate(err)
}

// ListEndpoints implements webhook.Store.
func (s *Store) ListEndpoints(ctx context.Context, accountID string) ([]webhook.Endpoint, error) {
	out := []webhook.Endpoint{}
	err := s.db.WithContext(ctx).Where("account_id = ?", accountID).Order("created_at, id").Find(&out).Error
	for i := range out {
		tidyEndpoint(&out[i])
	}
	return out, translate(err)
}

// GetEndpoint implements webhook.Store.
func (s *Store) GetEndpoint(ctx context.Context, accountID, id string) (webhook.Endpoint, error) {
	var e webhook.Endpoint
	if err := s.db.WithContext(ctx).Scopes(endpointOf(accountID, id)).Take(&e).Error; err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	tidyEndpoint(&e)
	return e, nil
}

// UpdateEndpoint implements webhook.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, accountID, id string, change func(*webhook.Endpoint) error) (webhook.Endpoint, error) {
	var e webhook.Endpoint
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Locking clause: two rotations at once must not both keep the
		// same previous secret.
		if err := tx.Scopes(endpointOf(accountID, id)).Clauses(clause.Locking{Strength: "UPDATE"}).Take(&e).Error; err != nil {
			return err
		}
		if err := change(&e); err != nil {
			return err
		}
		return tx.Scopes(endpointOf(accountID, id)).Select("*").Omit("id", "account_id", "created_at").Updates(&e).Error
	})
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	tidyEndpoint(&e)
	return e, nil
}

// DeleteEndpoint implements webhook.Store.
func (s *Store) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	res := s.db.WithContext(ctx).Scopes(endpointOf(accountID, id)).Delete(&webhook.Endpoint{})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return webhook.ErrNotFound
	}
	return nil
}

// ListDeliveries implements webhook.Store. An endpoint of another account
// is not found, even with no deliveries.
func (s *Store) ListDeliveries(ctx context.Context, accountID, endpointID string, limit, offset int) ([]webhook.Delivery, int64, error) {
	db := s.db.WithContext(ctx)
	if err := db.Scopes(endpointOf(accountID, endpointID)).Select("id").Take(&webhook.Endpoint{}).Error; err != nil {
		return nil, 0, translate(err)
	}
	of := func(db *gorm.DB) *gorm.DB {
		return db.Where("account_id = ? AND endpoint_id = ?", accountID, endpointID)
	}
	var total int64
	if err := db.Model(&webhook.Delivery{}).Scopes(of).Count(&total).Error; err != nil {
		return nil, 0, translate(err)
	}
	out := []webhook.Delivery{}
	q := db.Scopes(of).Order("created_at DESC, id DESC").Offset(offset)
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, 0, translate(err)
	}
	for i := range out {
		tidyDelivery(&out[i])
	}
	return out, total, nil
}

func tidyEndpoint(e *webhook.Endpoint) {
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	if e.Types == nil {
		e.Types = []string{}
	}
}

func tidyDelivery(d *webhook.Delivery) {
	d.CreatedAt, d.UpdatedAt, d.NextAttemptAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC(), notesdb.InUTC(d.NextAttemptAt)
}

// Relayed is a delivery the relay wrote: the queue gives it a job.
type Relayed struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
}

// RelayTx moves the relay over the next events of the log, at most
// limit, in the caller's transaction: it locks the relay's position (so
// that replicas relay one after the other), writes a pending delivery of
// each event for every enabled endpoint of its account that wants its
// type and existed when the event was written, and moves the position
// past them. It returns the deliveries written and how many events it
// passed. Events are read in (xid, seq) order below the oldest running
// transaction, as the feed reads them: once passed, nothing can appear
// before the position.
func RelayTx(tx *gorm.DB, limit int, now time.Time) ([]Relayed, int, error) {
	var pos struct {
		XID string `gorm:"column:xid"`
		Seq int64  `gorm:"column:seq"`
	}
	// Raw: a row lock on a one-row table and an xid8 read as text, which
	// GORM's Clauses could say only with more words than this.
	if err := tx.Raw("SELECT after_xid::text AS xid, after_seq AS seq FROM webhook_relay WHERE id = 1 FOR UPDATE").Scan(&pos).Error; err != nil {
		return nil, 0, fmt.Errorf("relay position: %w", translate(err))
	}
	var res struct {
		Passed     int
		Deliveries []byte
	}
	// Raw: one statement for the whole batch (the events, their
	// deliveries and the new position), a data-modifying WITH that GORM
	// cannot say. The delivery id is random, like the endpoint's.
	err := tx.Raw(`WITH batch AS (
  SELECT seq, id, account_id, type, created_at, xid FROM events
  WHERE (xid, seq) > (?::xid8, ?) AND xid < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY xid, seq LIMIT ?
), moved AS (
  UPDATE webhook_relay SET after_xid = last.xid, after_seq = last.seq
  FROM (SELECT xid, seq FROM batch ORDER BY xid DESC, seq DESC LIMIT 1) last WHERE webhook_relay.id = 1
), written AS (
  INSERT INTO webhook_deliveries
    (id, account_id, endpoint_id, event_seq, event_id, event_type, status, attempts, last_error, created_at, updated_at)
  SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), b.account_id, w.id, b.seq, b.id, b.type, 'pending', 0, '', ?, ?
  FROM batch b JOIN webhook_endpoints w ON w.account_id = b.account_id AND w.enabled AND w.created_at <= b.created_at
    AND (w.types = '[]'::jsonb OR w.types @> jsonb_build_array(b.type))
  RETURNING id, account_id
)
SELECT (SELECT count(*) FROM batch) AS passed,
  coalesce((SELECT json_agg(json_build_object('id', id, 'account_id', account_id)) FROM written), '[]')::text AS deliveries`,
		pos.XID, pos.Seq, limit, now, now).Scan(&res).Error
	if err != nil {
		return nil, 0, fmt.Errorf("relay events: %w", translate(err))
	}
	var out []Relayed
	if err := json.Unmarshal(res.Deliveries, &out); err != nil {
		return nil, 0, fmt.Errorf("relay events: %w", err)
	}
	return out, res.Passed, nil
}

// Target is what one attempt of a delivery needs: the delivery, its
// endpoint and the event's JSON, nil when the event was pruned.
type Target struct {
	Delivery webhook.Delivery
	Endpoint webhook.Endpoint
	Event    []byte
}

// eventJSON is the body of a delivery, built by PostgreSQL from the event
// row. Raw: a jsonb_build_object GORM has no form for.
const eventJSON = `SELECT jsonb_build_object(
  'id', id, 'type', type,
  'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
  'data', data)::text
FROM events WHERE account_id = ? AND seq = ?`

// Target reads what an attempt of the delivery needs.
func (s *Store) Target(ctx context.Context, accountID, deliveryID string) (Target, error) {
	var t Target
	db := s.db.WithContext(ctx)
	if err := db.Where("account_id = ? AND id = ?", accountID, deliveryID).Take(&t.Delivery).Error; err != nil {
		return Target{}, translate(err)
	}
	tidyDelivery(&t.Delivery)
	var err error
	if t.Endpoint, err = s.GetEndpoint(ctx, accountID, t.Delivery.EndpointID); err != nil {
		return Target{}, err
	}
	var body []string
	if err := db.Raw(eventJSON, accountID, t.Delivery.EventSeq).Scan(&body).Error; err != nil {
		return Target{}, translate(err)
	}
	if len(body) == 1 {
		t.Event = []byte(body[0])
	}
	return t, nil
}

// Attempt is the outcome of one attempt.
type Attempt struct {
	Status string
	// HTTPStatus is 0 when no response came.
	HTTPStatus int
	Latency    time.Duration
	Error      string
	// Next is when the next attempt is due; nil when none is.
	Next *time.Time
}

// RecordAttempt writes the outcome of an attempt on the delivery; tx is
// the store's session or a transaction on it.
func RecordAttempt(tx *gorm.DB, accountID, deliveryID string, a Attempt, now time.Time) error {
	set := map[string]any{
		"status": a.Status, "attempts": gorm.Expr("attempts + 1"), "last_error": a.Error,
		"next_attempt_at": a.Next, "updated_at": now,
	}
	if a.HTTPStatus != 0 {
		set["last_status"] = a.HTTPStatus
	} else {
		set["last_status"] = nil
	}
	if a.Latency > 0 {
		set["last_latency_ms"] = int(a.Latency.Milliseconds())
	}
	err := tx.Model(&webhook.Delivery{}).Where("account_id = ? AND id = ?", accountID, deliveryID).Updates(set).Error
	return translate(err)
}

// EndDelivery marks a delivery failed without an attempt: its endpoint
// is disabled or gone, or its event pruned.
func (s *Store) EndDelivery(ctx context.Context, accountID, deliveryID, reason string, now time.Time) error {
	err := s.db.WithContext(ctx).Model(&webhook.Delivery{}).Where("account_id = ? AND id = ?", accountID, deliveryID).
		Updates(map[string]any{"status": webhook.StatusFailed, "last_error": reason, "next_attempt_at": nil, "updated_at": now}).Error
	return translate(err)
}

// DisableEndpointTx disables an endpoint in tx, saying why.
func DisableEndpointTx(tx *gorm.DB, accountID, endpointID, reason string, now time.Time) error {
	err := tx.Model(&webhook.Endpoint{}).Scopes(endpointOf(accountID, endpointID)).
		Updates(map[string]any{"enabled": false, "disabled_reason": reason, "updated_at": now}).Error
	return translate(err)
}

// ResetDeliveryTx makes a delivery of the endpoint pending again, for a
// retry asked by its account; another account's is not found.
func ResetDeliveryTx(tx *gorm.DB, accountID, endpointID, deliveryID string, now time.Time) error {
	res := tx.Model(&webhook.Delivery{}).Where("account_id = ? AND endpoint_id = ? AND id = ?", accountID, endpointID, deliveryID).
		Updates(map[string]any{"status": webhook.StatusPending, "next_attempt_at": now, "updated_at": now})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return webhook.ErrNotFound
	}
	return nil
}
