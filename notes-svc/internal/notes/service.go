package notes

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

// Store persists notes. Every method is scoped to one account: a note of
// another account behaves exactly like a note that does not exist.
type Store interface {
	// CreateNote inserts n. When idem is not nil the insert is recorded
	// under idem.Key in the same transaction: a key already recorded with
	// the same fingerprint returns the recorded note and replayed=true,
	// with another fingerprint ErrIdempotencyMismatch, and a key held by a
	// request still running ErrIdempotencyInFlight.
	CreateNote(ctx context.Context, n Note, idem *IdempotencyRecord) (created Note, replayed bool, err error)
	GetNote(ctx context.Context, accountID, id string) (Note, error)
	// UpdateNote writes u over the note and bumps its version. When
	// versions is not nil, the note must be at one of them or the update
	// fails with ErrPreconditionFailed.
	UpdateNote(ctx context.Context, accountID, id string, u Update, versions []int64) (Note, error)
	// UpdateNote, ModifyNote and DeleteNote write the note's event in the
	// transaction of the change, as CreateNote does; UpdateNote and
	// ModifyNote refuse a note in the trash with ErrTrashed.
	//
	// ModifyNote locks the note, passes it to change and writes the
	// update change returns, bumping the version, all in one transaction:
	// concurrent read-modify-write cycles of one note run one after the
	// other and none is lost. An error from change aborts and is returned.
	ModifyNote(ctx context.Context, accountID, id string, change func(Note) (Update, error)) (Note, error)
	// DeleteNote removes the note, under the same versions rule.
	DeleteNote(ctx context.Context, accountID, id string, versions []int64) error
	// ListNotes calls each for every note q selects, in q's order. It
	// reads them in bounded batches and never holds a database connection
	// while each runs, since each may wait on a slow client: memory stays
	// flat and the pool is not the client's to hold. Each batch is its own
	// statement, so an unbounded listing is not one snapshot (see
	// docs/API.md for what it guarantees).
	ListNotes(ctx context.Context, accountID string, q ListQuery, each func(Note) error) error
	// CountNotes counts the notes q selects, ignoring limit and offset.
	CountNotes(ctx context.Context, accountID string, q ListQuery) (int64, error)
	// TrashNote puts the note in the trash at at, bumping its version;
	// RestoreNote takes it out. Each writes its event in the same
	// transaction. A note already where it is asked to go comes back as
	// it is, unchanged and with no event.
	TrashNote(ctx context.Context, accountID, id string, at time.Time) (Note, error)
	RestoreNote(ctx context.Context, accountID, id string, at time.Time) (Note, error)
	EventStore
}

// Update is a full write of the fields a client writes, the Draft's (Tags
// nil keeps the tags), at UpdatedAt.
type Update struct {
	Draft
	UpdatedAt time.Time
}

// IdempotencyRecord is what a store keeps for an Idempotency-Key.
type IdempotencyRecord struct {
	Key string
	// Fingerprint identifies the request; a replay must match it.
	Fingerprint [32]byte
	ExpiresAt   time.Time
}

// LockID derives the 64-bit advisory lock id of the record's key within
// accountID, so that concurrent requests with one key serialize.
func (r IdempotencyRecord) LockID(accountID string) int64 {
	h := sha256.Sum256([]byte("idempotency\x00" + accountID + "\x00" + r.Key))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// Service applies the notes rules on top of a Store.
type Service struct {
	store    Store
	now      func() time.Time
	listings *ListLimiter
	// eventRetention is how far back the event feed reaches.
	eventRetention time.Duration
}

// NewService returns a Service on store. now is the clock; nil means
// time.Now.
func NewService(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now, eventRetention: DefaultEventRetention}
}

// WithEventRetention sets how long events are served (and kept: the
// pruning uses the same setting); a cursor older than that expires. Call
// it before the Service is used.
func (s *Service) WithEventRetention(d time.Duration) *Service {
	if d > 0 {
		s.eventRetention = d
	}
	return s
}

// WithListLimiter makes every unbounded listing take a slot of l first;
// without one they are not bounded. Call it before the Service is used.
func (s *Service) WithListLimiter(l *ListLimiter) *Service {
	s.listings = l
	return s
}

// Create validates d and stores it as a new note of accountID. With a
// non-empty idempotencyKey, a retry of the same request returns the note
// the first one created, with replayed=true.
func (s *Service) Create(ctx context.Context, accountID string, d Draft, idempotencyKey string) (Note, bool, error) {
	d, err := d.Normalize()
	if err != nil {
		return Note{}, false, err
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	id, err := NewID()
	if err != nil {
		return Note{}, false, err
	}
	now := s.now().UTC()
	n := Note{ID: id, AccountID: accountID, CreatedAt: now, UpdatedAt: now, Version: 1}
	d.WriteTo(&n)
	var idem *IdempotencyRecord
	if idempotencyKey != "" {
		idem = &IdempotencyRecord{Key: idempotencyKey, Fingerprint: fingerprint("create", d), ExpiresAt: now.Add(IdempotencyTTL)}
	}
	created, replayed, err := s.store.CreateNote(ctx, n, idem)
	if err != nil {
		return Note{}, false, fmt.Errorf("create note: %w", err)
	}
	return created, replayed, nil
}

// fingerprint hashes the normalized request, so that retries which differ
// only in formatting or tag spelling count as the same request. It hashes
// the JSON encoding of the whole draft, so every field a client writes is
// in it, however many there are.
func fingerprint(op string, d Draft) [32]byte {
	b, err := json.Marshal(d)
	if err != nil {
		panic("notes: encode draft: " + err.Error()) // strings, slices and bools always encode
	}
	return sha256.Sum256(append([]byte(op+"\x00"), b...))
}

// Get returns the note id of accountID.
func (s *Service) Get(ctx context.Context, accountID, id string) (Note, error) {
	if !ValidID(id) {
		return Note{}, ErrNotFound
	}
	n, err := s.store.GetNote(ctx, accountID, id)
	if err != nil {
		return Note{}, fmt.Errorf("get note: %w", err)
	}
	return n, nil
}

// Replace overwrites the title and content of a note, and its tags when d
// carries tags, if the note satisfies cond.
func (s *Service) Replace(ctx context.Context, accountID, id string, d Draft, cond Condition) (Note, error) {
	d, err := d.Normalize()
	if err != nil {
		return Note{}, err
	}
	if !ValidID(id) {
		return Note{}, ErrNotFound
	}
	u := Update{Draft: d, UpdatedAt: s.now().UTC()}
	n, err := s.store.UpdateNote(ctx, accountID, id, u, cond.expected())
	if err != nil {
		return Note{}, fmt.Errorf("replace note: %w", err)
	}
	return n, nil
}

// errNoChange aborts a patch that changes nothing.
var errNoChange = errors.New("no change")

// Patch applies p to a note if the note satisfies cond. The note is read
// and written under a row lock, so a concurrent write is never lost.
func (s *Service) Patch(ctx context.Context, accountID, id string, p Patch, cond Condition) (Note, error) {
	if !ValidID(id) {
		return Note{}, ErrNotFound
	}
	var unchanged Note
	n, err := s.store.ModifyNote(ctx, accountID, id, func(cur Note) (Update, error) {
		if !cond.Matches(cur.Version) {
			return Update{}, ErrPreconditionFailed
		}
		d, err := p.Apply(cur)
		if err != nil {
			return Update{}, err
		}
		if p.Empty() {
			unchanged = cur
			return Update{}, errNoChange
		}
		return Update{Draft: d, UpdatedAt: s.now().UTC()}, nil
	})
	var verr *fielderr.List
	switch {
	case errors.Is(err, errNoChange):
		return unchanged, nil
	case errors.As(err, &verr), errors.Is(err, ErrPreconditionFailed):
		return Note{}, err
	case err != nil:
		return Note{}, fmt.Errorf("patch note: %w", err)
	}
	return n, nil
}

// Delete removes a note for good if it satisfies cond.
func (s *Service) Delete(ctx context.Context, accountID, id string, cond Condition) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	if err := s.store.DeleteNote(ctx, accountID, id, cond.expected()); err != nil {
		return fmt.Errorf("delete note: %w", err)
	}
	return nil
}

// List calls each for every note of accountID that q selects. An
// unbounded listing (no Limit) first takes a slot of the ListLimiter, or
// fails with ErrTooManyListings or ErrListingsBusy before reading a note.
func (s *Service) List(ctx context.Context, accountID string, q ListQuery, each func(Note) error) error {
	q, err := s.listQuery(ctx, accountID, q)
	if err != nil {
		return err
	}
	if q.Limit == 0 && s.listings != nil {
		release, err := s.listings.Acquire(ctx, accountID)
		if err != nil {
			return fmt.Errorf("list notes: %w", err)
		}
		defer release()
	}
	if err := s.store.ListNotes(ctx, accountID, q, each); err != nil {
		return fmt.Errorf("list notes: %w", err)
	}
	return nil
}

// Count counts the notes of accountID that q selects, ignoring paging.
func (s *Service) Count(ctx context.Context, accountID string, q ListQuery) (int64, error) {
	q, err := s.listQuery(ctx, accountID, q)
	if err != nil {
		return 0, err
	}
	n, err := s.store.CountNotes(ctx, accountID, q)
	if err != nil {
		return 0, fmt.Errorf("count notes: %w", err)
	}
	return n, nil
}

// listQuery validates q and resolves its StartingAfter: a cursor decodes
// to its place; a note id, as Stripe's starting_after takes it, is looked
// up in the account for its created_at.
func (s *Service) listQuery(ctx context.Context, accountID string, q ListQuery) (ListQuery, error) {
	q, err := q.Validate()
	if err != nil || q.StartingAfter == "" || q.After != nil {
		return q, err
	}
	if ValidID(q.StartingAfter) {
		n, err := s.store.GetNote(ctx, accountID, q.StartingAfter)
		if errors.Is(err, ErrNotFound) {
			return ListQuery{}, paramError("starting_after", "names no note of your account; send the cursor of the Link header instead")
		}
		if err != nil {
			return ListQuery{}, fmt.Errorf("list notes: %w", err)
		}
		c := CursorOf(n)
		q.After = &c
		return q, nil
	}
	c, err := DecodeNoteCursor(q.StartingAfter)
	if err != nil {
		return ListQuery{}, paramError("starting_after", err.Error())
	}
	q.After = &c
	return q, nil
}

// Trash puts a note in the trash; a note already there comes back as it
// is. A trashed note is left out of listings, refuses edits and is purged
// after the trash retention, unless restored.
func (s *Service) Trash(ctx context.Context, accountID, id string) (Note, error) {
	return s.move(ctx, accountID, id, "trash note", s.store.TrashNote)
}

// Restore takes a note out of the trash; a note not there comes back as
// it is.
func (s *Service) Restore(ctx context.Context, accountID, id string) (Note, error) {
	return s.move(ctx, accountID, id, "restore note", s.store.RestoreNote)
}

// move is Trash or Restore, by the store's method of it; label names it
// in errors.
func (s *Service) move(ctx context.Context, accountID, id, label string,
	to func(ctx context.Context, accountID, id string, at time.Time) (Note, error)) (Note, error) {
	if !ValidID(id) {
		return Note{}, ErrNotFound
	}
	n, err := to(ctx, accountID, id, s.now().UTC())
	if err != nil {
		return Note{}, fmt.Errorf("%s: %w", label, err)
	}
	return n, nil
}

// Events returns a page of the account's event feed after q.After, oldest
// first, and whether more follow. Events older than the retention are not
// served, and a cursor that points before them is ErrCursorExpired.
func (s *Service) Events(ctx context.Context, accountID string, q EventQuery) ([]Event, bool, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultEventLimit
	}
	q.Limit = min(q.Limit, MaxEventLimit)
	q.Horizon = s.now().Add(-s.eventRetention)
	evs, more, err := s.store.ListEvents(ctx, accountID, q)
	if err != nil {
		return nil, false, fmt.Errorf("list events: %w", err)
	}
	return evs, more, nil
}
