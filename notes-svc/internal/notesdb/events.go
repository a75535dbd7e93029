package notesdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// SetEventObject sets how a note is written into its events' data.object:
// the API's JSON form of a note, which the HTTP layer owns and serve
// passes here. Call it before the Store is used.
func (s *Store) SetEventObject(f func(notes.Note) json.RawMessage) { s.object = f }

// errNoEventObject reports a store whose writes cannot describe their
// note: a wiring mistake, which fails every write instead of logging
// events with no object.
var errNoEventObject = errors.New("notesdb: no event object encoder (SetEventObject)")

// appendEvent inserts the event of typ about n (for a deletion only its
// id is kept) on tx, the transaction of the change. The webhooks read the
// log itself (their relay), so nothing else is written here.
func (s *Store) appendEvent(tx *gorm.DB, typ string, n notes.Note) error {
	ev, err := s.newEvent(typ, n)
	if err != nil {
		return err
	}
	// The insert GORM built from the model at New (eventInsert), not
	// again per call.
	return tx.Exec(s.insertEventSQL, eventValues(&ev)...).Error
}

// AppendEventTx appends an event of typ about object, as its data's
// object, to accountID's log in tx, with the event insert every note
// change uses: the webhook queue's EventLog, for an endpoint it disables.
func (s *Store) AppendEventTx(tx *gorm.DB, accountID, typ string, object any) error {
	obj, err := json.Marshal(object)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	ev, err := s.event(accountID, typ, obj)
	if err != nil {
		return err
	}
	if err := tx.Exec(s.insertEventSQL, eventValues(&ev)...).Error; err != nil {
		return fmt.Errorf("append event: %w", translate(err))
	}
	return nil
}

// newEvent is the event typ about n, not inserted yet.
func (s *Store) newEvent(typ string, n notes.Note) (notes.Event, error) {
	var obj json.RawMessage
	if typ == notes.EventNoteDeleted {
		obj, _ = json.Marshal(struct {
			ID string `json:"id"`
		}{n.ID})
	} else {
		if s.object == nil {
			return notes.Event{}, errNoEventObject
		}
		obj = s.object(n)
	}
	return s.event(n.AccountID, typ, obj)
}

// event is the event typ of accountID about obj, a JSON object.
func (s *Store) event(accountID, typ string, obj json.RawMessage) (notes.Event, error) {
	// {"object": obj} by hand: json.Marshal would check and compact the
	// note's JSON again, which its encoder has just written.
	data := make(json.RawMessage, 0, len(obj)+12)
	data = append(append(append(data, `{"object":`...), obj...), '}')
	id, err := notes.NewPrefixedID(notes.EventIDPrefix)
	if err != nil {
		return notes.Event{}, err
	}
	return notes.Event{ID: id, AccountID: accountID, Type: typ, CreatedAt: s.now().UTC(), Data: data}, nil
}

// eventInsert is the insert of an event as GORM builds it from the model,
// returning its seq; eventValues are the values it binds, in its order
// (checked at New).
func (s *Store) eventInsert() (string, error) {
	var cols []clause.Column
	q, err := s.dryRun(func(db *gorm.DB) *gorm.DB {
		// A nil RawMessage would be written as a NULL literal, not bound.
		db = db.Create(&notes.Event{Data: json.RawMessage("{}")})
		if v, ok := db.Statement.Clauses["VALUES"].Expression.(clause.Values); ok {
			cols = v.Columns
		}
		return db
	})
	if err != nil {
		return "", err
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	if want := []string{"id", "account_id", "type", "created_at", "data"}; !slices.Equal(names, want) || strings.Count(q, "?") != len(want) || !strings.Contains(q, "RETURNING") {
		return "", fmt.Errorf("event insert: columns %v, want %v returning seq: %s", names, want, q)
	}
	return q, nil
}

func eventValues(ev *notes.Event) []any {
	return []any{ev.ID, ev.AccountID, ev.Type, ev.CreatedAt, ev.Data}
}

// ListEvents implements notes.EventStore. The feed is in the order of
// the writing transactions' ids, then seq, and holds only events written
// by transactions older than every transaction still running (xid below
// the snapshot's xmin). Every transaction that can still write an event
// has an xid at or above xmin, so once a reader has passed an (xid, seq)
// below it, nothing can appear before its cursor: nothing is ever
// skipped. seq alone could not give that, since it is taken at insert,
// not at commit: a transaction that commits late may hold a lower seq
// than one already shown, and the order of xids is not that of seqs
// either (an xid is assigned at a transaction's first write). A long
// transaction anywhere in the database holds the feed back until it ends
// (docs/API.md).
func (s *Store) ListEvents(ctx context.Context, accountID string, q notes.EventQuery) ([]notes.Event, bool, error) {
	db := s.db.WithContext(ctx)
	query := db.Where("account_id = ? AND created_at >= ?", accountID, q.Horizon).
		// Raw condition: the snapshot's xmin is a function GORM has no form for.
		Where("xid < pg_snapshot_xmin(pg_current_snapshot())")
	if q.After > 0 {
		// The cursor's own event must still be served: if it was pruned or
		// is past the horizon, events after it may have gone too. Its xid
		// places the page.
		var at []string
		if err := db.Model(&notes.Event{}).Where("account_id = ? AND seq = ? AND created_at >= ?", accountID, q.After, q.Horizon).
			Pluck("xid::text", &at).Error; err != nil {
			return nil, false, translate(err)
		}
		if len(at) == 0 {
			return nil, false, notes.ErrCursorExpired
		}
		// Raw condition: a row comparison, which GORM has no form for.
		query = query.Where("(xid, seq) > (?::xid8, ?)", at[0], q.After)
	}
	if len(q.Types) > 0 {
		query = query.Where("type = ANY(?)", pgArray[string](q.Types))
	}
	var evs []notes.Event
	err := query.Order("xid, seq").Clauses(pagedBy{limit: q.Limit + 1}).Find(&evs).Error
	if err != nil {
		return nil, false, translate(err)
	}
	more := len(evs) > q.Limit
	if more {
		evs = evs[:q.Limit]
	}
	for i := range evs {
		evs[i].CreatedAt = evs[i].CreatedAt.UTC()
	}
	return evs, more, nil
}

// maintenanceBatch bounds each statement of PurgeTrash and PruneEvents,
// so that neither holds many row locks, or a long transaction, at once.
const maintenanceBatch = 500

// PurgeTrash deletes for good the notes trashed before before, of every
// account, and reports how many went. It runs in batches, each one
// transaction that deletes up to maintenanceBatch notes and writes their
// note.deleted events. A note restored
// meanwhile is left alone: the delete checks trashed_at again on the row
// it locks, and notes locked by a write in progress wait for the next run.
func (s *Store) PurgeTrash(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		var gone []notes.Note
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// Across accounts by design: the trash retention applies to
			// every account, and each event names its note's account.
			// Raw subquery: a bounded delete with SKIP LOCKED, which GORM
			// has no form for.
			err := tx.Clauses(clause.Returning{Columns: []clause.Column{{Name: "id"}, {Name: "account_id"}}}).
				Where(`id IN (SELECT id FROM notes WHERE trashed_at < ? ORDER BY trashed_at LIMIT ? FOR UPDATE SKIP LOCKED) AND trashed_at < ?`,
					before, maintenanceBatch, before).
				Delete(&gone).Error
			if err != nil {
				return err
			}
			for _, n := range gone {
				if err := s.appendEvent(tx, notes.EventNoteDeleted, n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("purge trash: %w", translate(err))
		}
		total += int64(len(gone))
		if len(gone) < maintenanceBatch {
			return total, nil
		}
	}
}

// PruneEvents deletes the events created before before, of every
// account, in statements of at most maintenanceBatch rows, and reports
// how many went.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		// Raw: a bounded delete, which GORM has no form for.
		res := s.db.WithContext(ctx).Exec(`DELETE FROM events WHERE seq IN (
			SELECT seq FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?)`, before, maintenanceBatch)
		if res.Error != nil {
			return total, fmt.Errorf("prune events: %w", translate(res.Error))
		}
		total += res.RowsAffected
		if res.RowsAffected < maintenanceBatch {
			return total, nil
		}
	}
}

// TrashNote implements notes.Store.
func (s *Store) TrashNote(ctx context.Context, accountID, id string, at time.Time) (notes.Note, error) {
	return s.moveNote(ctx, accountID, id, &at, notes.EventNoteTrashed)
}

// RestoreNote implements notes.Store; the restore is dated by its event.
func (s *Store) RestoreNote(ctx context.Context, accountID, id string, _ time.Time) (notes.Note, error) {
	return s.moveNote(ctx, accountID, id, nil, notes.EventNoteRestored)
}

// moveNote sets the note's trashed_at to trashedAt (nil: out of the
// trash) when it is not there yet, bumping its version, and writes the
// event typ; a note already there is returned as it is, with no event.
func (s *Store) moveNote(ctx context.Context, accountID, id string, trashedAt *time.Time, typ string) (notes.Note, error) {
	var out notes.Note
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		state := "trashed_at IS NOT NULL"
		if trashedAt != nil {
			state = "trashed_at IS NULL"
		}
		// An expression GORM has no form for.
		set := map[string]any{"trashed_at": trashedAt, "version": gorm.Expr("version + 1")}
		res := tx.Model(&out).Clauses(clause.Returning{Columns: s.noteColumns}).
			Scopes(noteOf(accountID, id)).Where(state).Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Not found (another account's included), or already there.
			return tx.Scopes(noteOf(accountID, id)).Take(&out).Error
		}
		tidyNote(&out)
		return s.appendEvent(tx, typ, out)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	tidyNote(&out)
	return out, nil
}
