// Package notestest provides an in-memory notes.Store, so that the layers
// above the store can be tested without PostgreSQL.
//
// It keeps the contract the interface documents (account scoping,
// versions, idempotency records) closely enough for handler tests; it is
// not a model of PostgreSQL: full-text search is a case-insensitive
// substring match and a listing is one snapshot.
package notestest

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// Store is an in-memory notes.Store, safe for concurrent use. The zero
// value is not usable; call New.
type Store struct {
	mu    sync.Mutex
	notes map[key]notes.Note
	idem  map[key]idemRecord
	// events is the event log of every account, in seq order; an event's
	// data holds only the note's id, which is all handler tests read.
	events []notes.Event
	err    error
}

// key scopes an id to its account, as every query of the real store does.
type key struct{ account, id string }

type idemRecord struct {
	fingerprint [32]byte
	note        notes.Note
}

// New returns an empty Store.
func New() *Store {
	return &Store{notes: map[key]notes.Note{}, idem: map[key]idemRecord{}}
}

// FailWith makes every later call return err, as a broken database would;
// nil heals the store.
func (s *Store) FailWith(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// CreateNote implements notes.Store.
func (s *Store) CreateNote(_ context.Context, n notes.Note, idem *notes.IdempotencyRecord) (notes.Note, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return notes.Note{}, false, s.err
	}
	if idem != nil {
		if rec, ok := s.idem[key{n.AccountID, idem.Key}]; ok {
			if rec.fingerprint != idem.Fingerprint {
				return notes.Note{}, false, notes.ErrIdempotencyMismatch
			}
			return clone(rec.note), true, nil
		}
	}
	k := key{n.AccountID, n.ID}
	if _, ok := s.notes[k]; ok {
		return notes.Note{}, false, notes.ErrConflict
	}
	s.notes[k] = clone(n)
	s.record(notes.EventNoteCreated, n)
	if idem != nil {
		s.idem[key{n.AccountID, idem.Key}] = idemRecord{fingerprint: idem.Fingerprint, note: clone(n)}
	}
	return clone(n), false, nil
}

// GetNote implements notes.Store.
func (s *Store) GetNote(_ context.Context, accountID, id string) (notes.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.find(accountID, id)
	if err != nil {
		return notes.Note{}, err
	}
	return clone(n), nil
}

// UpdateNote implements notes.Store.
func (s *Store) UpdateNote(_ context.Context, accountID, id string, u notes.Update, versions []int64) (notes.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.findWritable(accountID, id)
	if err != nil {
		return notes.Note{}, err
	}
	if versions != nil && !slices.Contains(versions, n.Version) {
		return notes.Note{}, notes.ErrPreconditionFailed
	}
	return s.apply(n, u), nil
}

// ModifyNote implements notes.Store. change runs under the store's lock,
// which serializes it with every other call as the row lock would.
func (s *Store) ModifyNote(_ context.Context, accountID, id string, change func(notes.Note) (notes.Update, error)) (notes.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.findWritable(accountID, id)
	if err != nil {
		return notes.Note{}, err
	}
	u, err := change(clone(n))
	if err != nil {
		return notes.Note{}, err
	}
	return s.apply(n, u), nil
}

// find returns the account's note id, or the failure the store is set to
// give; s.mu is held.
func (s *Store) find(accountID, id string) (notes.Note, error) {
	if s.err != nil {
		return notes.Note{}, s.err
	}
	n, ok := s.notes[key{accountID, id}]
	if !ok {
		return notes.Note{}, notes.ErrNotFound
	}
	return n, nil
}

// findWritable is find of a note an edit may change: not in the trash.
func (s *Store) findWritable(accountID, id string) (notes.Note, error) {
	n, err := s.find(accountID, id)
	if err == nil && n.TrashedAt != nil {
		err = notes.ErrTrashed
	}
	return n, err
}

// apply writes u over n and bumps its version; s.mu is held.
func (s *Store) apply(n notes.Note, u notes.Update) notes.Note {
	u.WriteTo(&n)
	n.Tags = slices.Clone(n.Tags)
	n.UpdatedAt = u.UpdatedAt
	n.Version++
	s.notes[key{n.AccountID, n.ID}] = n
	s.record(notes.EventNoteUpdated, n)
	return clone(n)
}

// record appends the event typ of n; s.mu is held.
func (s *Store) record(typ string, n notes.Note) {
	id, _ := notes.NewPrefixedID(notes.EventIDPrefix)
	data := []byte(`{"object":{"id":"` + n.ID + `"}}`)
	s.events = append(s.events, notes.Event{Seq: int64(len(s.events) + 1), ID: id, AccountID: n.AccountID, Type: typ,
		CreatedAt: time.Now().UTC(), Data: data})
}

// TrashNote implements notes.Store.
func (s *Store) TrashNote(_ context.Context, accountID, id string, at time.Time) (notes.Note, error) {
	return s.move(accountID, id, &at, notes.EventNoteTrashed)
}

// RestoreNote implements notes.Store.
func (s *Store) RestoreNote(_ context.Context, accountID, id string, _ time.Time) (notes.Note, error) {
	return s.move(accountID, id, nil, notes.EventNoteRestored)
}

func (s *Store) move(accountID, id string, trashedAt *time.Time, typ string) (notes.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.find(accountID, id)
	if err != nil {
		return notes.Note{}, err
	}
	if (n.TrashedAt != nil) == (trashedAt != nil) {
		return clone(n), nil
	}
	n.TrashedAt = trashedAt
	n.Version++
	s.notes[key{accountID, id}] = n
	s.record(typ, n)
	return clone(n), nil
}

// ListEvents implements notes.Store. Every event is committed here, so
// none waits for an older transaction.
func (s *Store) ListEvents(_ context.Context, accountID string, q notes.EventQuery) ([]notes.Event, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, false, s.err
	}
	if q.After > 0 && (q.After > int64(len(s.events)) || s.events[q.After-1].AccountID != accountID ||
		s.events[q.After-1].CreatedAt.Before(q.Horizon)) {
		return nil, false, notes.ErrCursorExpired
	}
	var out []notes.Event
	for _, ev := range s.events[q.After:] {
		if ev.AccountID != accountID || ev.CreatedAt.Before(q.Horizon) || (len(q.Types) > 0 && !slices.Contains(q.Types, ev.Type)) {
			continue
		}
		if len(out) == q.Limit {
			return out, true, nil
		}
		out = append(out, ev)
	}
	return out, false, nil
}

// DeleteNote implements notes.Store.
func (s *Store) DeleteNote(_ context.Context, accountID, id string, versions []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	k := key{accountID, id}
	n, ok := s.notes[k]
	if !ok {
		return notes.ErrNotFound
	}
	if versions != nil && !slices.Contains(versions, n.Version) {
		return notes.ErrPreconditionFailed
	}
	delete(s.notes, k)
	s.record(notes.EventNoteDeleted, n)
	return nil
}

// ListNotes implements notes.Store. each runs after the lock is released,
// as the real store holds no connection while it runs.
func (s *Store) ListNotes(_ context.Context, accountID string, q notes.ListQuery, each func(notes.Note) error) error {
	list, err := s.selected(accountID, q)
	if err != nil {
		return err
	}
	if q.After != nil {
		// The cursor's created_at order, whichever way it runs.
		desc := q.Sort == notes.SortCreatedDesc
		list = slices.DeleteFunc(list, func(n notes.Note) bool {
			c := n.CreatedAt.Compare(q.After.CreatedAt)
			if c == 0 {
				c = cmp.Compare(n.ID, q.After.ID)
			}
			keep := c > 0 && !desc || c < 0 && desc
			return !keep
		})
	}
	list = list[min(q.Offset, len(list)):]
	if q.Limit > 0 {
		list = list[:min(q.Limit, len(list))]
	}
	for _, n := range list {
		if err := each(n); err != nil {
			return err
		}
	}
	return nil
}

// CountNotes implements notes.Store.
func (s *Store) CountNotes(_ context.Context, accountID string, q notes.ListQuery) (int64, error) {
	list, err := s.selected(accountID, q)
	return int64(len(list)), err
}

// selected returns copies of the notes of accountID that q's filters keep,
// in q's order with id breaking ties.
func (s *Store) selected(accountID string, q notes.ListQuery) ([]notes.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []notes.Note
	for k, n := range s.notes {
		if k.account != accountID || !hasTags(n, q.Tags) || (q.Pinned != nil && n.Pinned != *q.Pinned) || (n.TrashedAt != nil) != q.Trashed ||
			(q.Search != "" && !strings.Contains(strings.ToLower(n.Title+"\n"+n.Content), strings.ToLower(q.Search))) {
			continue
		}
		out = append(out, clone(n))
	}
	if q.Sort == notes.SortRelevance {
		// A stand-in for the rank: a match in the title first.
		inTitle := func(n notes.Note) int {
			if strings.Contains(strings.ToLower(n.Title), strings.ToLower(q.Search)) {
				return 0
			}
			return 1
		}
		slices.SortFunc(out, func(a, b notes.Note) int { return cmp.Or(cmp.Compare(inTitle(a), inTitle(b)), cmp.Compare(a.ID, b.ID)) })
		return out, nil
	}
	keys := q.Sort.Keys()
	if q.Sort == "" {
		keys = notes.SortCreatedAsc.Keys()
	}
	slices.SortFunc(out, func(a, b notes.Note) int {
		for _, k := range keys {
			if c := compareField(a, b, k.Field); c != 0 {
				if k.Desc {
					return -c
				}
				return c
			}
		}
		// Ties break by id in the last key's direction, as ORDER BY
		// ..., id DESC does.
		if c := cmp.Compare(a.ID, b.ID); keys[len(keys)-1].Desc {
			return -c
		} else {
			return c
		}
	})
	return out, nil
}

// compareField compares a and b on the field whose gorm column is column.
func compareField(a, b notes.Note, column string) int {
	t := reflect.TypeFor[notes.Note]()
	for i := range t.NumField() {
		if !slices.Contains(strings.Split(t.Field(i).Tag.Get("gorm"), ";"), "column:"+column) {
			continue
		}
		switch x, y := reflect.ValueOf(a).Field(i).Interface(), reflect.ValueOf(b).Field(i).Interface(); x := x.(type) {
		case time.Time:
			return x.Compare(y.(time.Time))
		case string:
			return cmp.Compare(x, y.(string))
		case bool:
			return cmp.Compare(boolInt(x), boolInt(y.(bool)))
		}
	}
	panic("notestest: no sortable field of column " + column)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasTags(n notes.Note, tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(n.Tags, t) {
			return false
		}
	}
	return true
}

// clone keeps callers from sharing the stored tag slices.
func clone(n notes.Note) notes.Note {
	if n.TrashedAt != nil {
		t := *n.TrashedAt
		n.TrashedAt = &t
	}
	n.Tags = slices.Clone(n.Tags)
	if n.Tags == nil {
		n.Tags = []string{}
	}
	return n
}

var _ notes.Store = (*Store)(nil)
