package notesdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// The statements on notes and idempotency records are GORM's, from the
// gorm tags of notes.Note (the one column mapping) and of
// idempotencyRecord. Every single-note statement is scoped by noteOf,
// every listing and count by the account scope of noteFilter.

// noteOf scopes a statement to the note id of accountID: another account's
// note is never found, written or deleted.
func noteOf(accountID, id string) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB { return db.Where("account_id = ? AND id = ?", accountID, id) }
}

// atVersions keeps a write to a note at one of versions; nil means any.
// versions is one array parameter, so that every If-Match runs the same
// prepared statement, however many tags it names.
func atVersions(versions []int64) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		if versions == nil {
			return db
		}
		return db.Where("version = ANY(?)", pgArray[int64](versions))
	}
}

// tidyNote gives a note read the form the domain promises: times in UTC
// (the serializer already makes tags never nil).
func tidyNote(n *notes.Note) {
	n.CreatedAt, n.UpdatedAt, n.TrashedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC(), InUTC(n.TrashedAt)
}

// InUTC is a nullable time read from the database in UTC, nil kept.
func InUTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// idempotencyRecord is a row of idempotency_keys: an Idempotency-Key of a
// POST, the request's fingerprint and the note it created, replayed to a
// retry.
type idempotencyRecord struct {
	AccountID   string `gorm:"column:account_id;primaryKey"`
	Key         string `gorm:"column:key;primaryKey"`
	Fingerprint []byte `gorm:"column:fingerprint"`
	NoteID      string `gorm:"column:note_id"`
	// Response is the note created, notes.Note's JSON encoding.
	Response  json.RawMessage `gorm:"column:response"`
	CreatedAt time.Time       `gorm:"column:created_at;autoCreateTime:false"`
	ExpiresAt time.Time       `gorm:"column:expires_at"`
}

// TableName implements schema.Tabler.
func (idempotencyRecord) TableName() string { return "idempotency_keys" }

// replayNote decodes the note a record holds. Records written before the
// snapshot was the Note itself name the times in snake case; they expire
// within notes.IdempotencyTTL of the upgrade.
func replayNote(raw []byte, accountID string) (notes.Note, error) {
	var n notes.Note
	var legacy struct {
		CreatedAt *time.Time `json:"created_at"`
		UpdatedAt *time.Time `json:"updated_at"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return notes.Note{}, fmt.Errorf("decode idempotency record: %w", err)
	}
	if err := json.Unmarshal(raw, &legacy); err == nil && legacy.CreatedAt != nil && legacy.UpdatedAt != nil {
		n.CreatedAt, n.UpdatedAt = *legacy.CreatedAt, *legacy.UpdatedAt
	}
	n.AccountID = accountID
	if n.Tags == nil {
		n.Tags = []string{}
	}
	tidyNote(&n)
	return n, nil
}

// CreateNote implements notes.Store.
func (s *Store) CreateNote(ctx context.Context, n notes.Note, idem *notes.IdempotencyRecord) (notes.Note, bool, error) {
	if idem == nil {
		// The note and its event are one statement, so they commit
		// together without a transaction of their own.
		if err := s.createNote(s.db.WithContext(ctx), &n); err != nil {
			return notes.Note{}, false, translate(err)
		}
		return n, false, nil
	}
	var out notes.Note
	var replayed bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The transaction-scoped lock tells a concurrent duplicate that
		// the key is in flight instead of making it wait. Raw: a function
		// call, not a table GORM could name.
		var locked bool
		if err := tx.Raw("SELECT pg_try_advisory_xact_lock(?)", idem.LockID(n.AccountID)).Scan(&locked).Error; err != nil {
			return err
		}
		if !locked {
			return notes.ErrIdempotencyInFlight
		}
		var rec idempotencyRecord
		err := tx.Where("account_id = ? AND key = ? AND expires_at > ?", n.AccountID, idem.Key, n.CreatedAt).Take(&rec).Error
		switch {
		case err == nil:
			if string(rec.Fingerprint) != string(idem.Fingerprint[:]) {
				return notes.ErrIdempotencyMismatch
			}
			out, err = replayNote(rec.Response, n.AccountID)
			replayed = true
			return err
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		if err := s.createNote(tx, &n); err != nil {
			return err
		}
		snap, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("encode idempotency record: %w", err)
		}
		// An expired record of the same key is replaced.
		rec = idempotencyRecord{AccountID: n.AccountID, Key: idem.Key, Fingerprint: idem.Fingerprint[:], NoteID: n.ID,
			Response: snap, CreatedAt: n.CreatedAt, ExpiresAt: idem.ExpiresAt}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rec).Error; err != nil {
			return err
		}
		out = n
		return nil
	})
	if err != nil {
		return notes.Note{}, false, translate(err)
	}
	return out, replayed, nil
}

// GetNote implements notes.Store.
func (s *Store) GetNote(ctx context.Context, accountID, id string) (notes.Note, error) {
	var n notes.Note
	// The read GORM built from noteOf at New, read through pgx (readNote).
	err := s.readNote(ctx, accountID, id, &n)
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return n, nil
}

// UpdateNote implements notes.Store.
func (s *Store) UpdateNote(ctx context.Context, accountID, id string, u notes.Update, versions []int64) (notes.Note, error) {
	var n notes.Note
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		n, err = s.updateNote(tx, accountID, id, u, versions)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return missOrMismatch(tx, accountID, id)
		}
		if err != nil {
			return err
		}
		return s.appendEvent(tx, notes.EventNoteUpdated, n)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return n, nil
}

// updateNote writes u over the note and bumps its version, when the note
// is at one of versions or versions is nil; otherwise it is
// gorm.ErrRecordNotFound. The columns written are those of the Draft's
// fields, found by name in the model, so a field a client writes is
// stored without a list here to keep.
func (s *Store) updateNote(db *gorm.DB, accountID, id string, u notes.Update, versions []int64) (notes.Note, error) {
	var next notes.Note
	u.WriteTo(&next)
	nv := reflect.ValueOf(next)
	set := map[string]any{}
	dv := reflect.ValueOf(u.Draft)
	for i, f := range reflect.VisibleFields(dv.Type()) {
		if v := dv.Field(i); v.Kind() == reflect.Slice && v.IsNil() {
			continue // nil keeps the column
		}
		field := s.notes.LookUpField(f.Name)
		v, _ := field.ValueOf(db.Statement.Context, nv)
		set[field.DBName] = v
	}
	set[s.notes.LookUpField("UpdatedAt").DBName] = u.UpdatedAt
	// An expression GORM has no form for.
	set[s.notes.LookUpField("Version").DBName] = gorm.Expr("version + 1")
	var out notes.Note
	res := db.Model(&out).Clauses(clause.Returning{Columns: s.noteColumns}).
		Scopes(noteOf(accountID, id), atVersions(versions)).Where("trashed_at IS NULL").Updates(set)
	if res.Error != nil {
		return notes.Note{}, res.Error
	}
	if res.RowsAffected == 0 {
		return notes.Note{}, gorm.ErrRecordNotFound
	}
	tidyNote(&out)
	return out, nil
}

// missOrMismatch explains a conditional write that touched no row: no
// such note, a note in the trash (an edit's only), or another version.
func missOrMismatch(db *gorm.DB, accountID, id string) error {
	var found struct{ Trashed bool }
	err := db.Model(&notes.Note{}).Select("trashed_at IS NOT NULL AS trashed").Scopes(noteOf(accountID, id)).Take(&found).Error
	switch {
	case err != nil:
		return err
	case found.Trashed:
		return notes.ErrTrashed
	}
	return notes.ErrPreconditionFailed
}

// ModifyNote implements notes.Store.
func (s *Store) ModifyNote(ctx context.Context, accountID, id string, change func(notes.Note) (notes.Update, error)) (notes.Note, error) {
	var out notes.Note
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur notes.Note
		if err := tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).Scopes(noteOf(accountID, id)).Take(&cur).Error; err != nil {
			return err
		}
		tidyNote(&cur)
		if cur.TrashedAt != nil {
			return notes.ErrTrashed
		}
		u, err := change(cur)
		if err != nil {
			return err
		}
		if out, err = s.updateNote(tx, accountID, id, u, nil); err != nil {
			return err
		}
		return s.appendEvent(tx, notes.EventNoteUpdated, out)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return out, nil
}

// DeleteNote implements notes.Store.
// A note in the trash may be deleted: deletion is for good, trash or not.
func (s *Store) DeleteNote(ctx context.Context, accountID, id string, versions []int64) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Scopes(noteOf(accountID, id), atVersions(versions)).Delete(&notes.Note{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			var count int64
			if err := tx.Model(&notes.Note{}).Scopes(noteOf(accountID, id)).Count(&count).Error; err != nil {
				return err
			}
			if count == 0 {
				return notes.ErrNotFound
			}
			return notes.ErrPreconditionFailed
		}
		return s.appendEvent(tx, notes.EventNoteDeleted, notes.Note{ID: id, AccountID: accountID})
	})
	return translate(err)
}

// ListBatch bounds each statement of a listing.
type ListBatch struct {
	// Rows is the most notes one statement reads.
	Rows int
	// Bytes ends a batch early once the notes read reach about this many
	// bytes, so that a batch of large notes stays small in memory.
	Bytes int
}

// DefaultListBatch reads 500 notes at a time, or 1 MiB of them.
var DefaultListBatch = ListBatch{Rows: 500, Bytes: 1 << 20}

// SetListBatch sets the batches of ListNotes; a zero field keeps its
// default. Call it before the Store is used.
func (s *Store) SetListBatch(b ListBatch) {
	s.batch = DefaultListBatch
	if b.Rows > 0 {
		s.batch.Rows = b.Rows
	}
	if b.Bytes > 0 {
		s.batch.Bytes = b.Bytes
	}
}

// ListNotes implements notes.Store. Notes are read in batches of at most
// ListBatch each, one statement per batch: the first starts at q.Offset,
// each next one after the (sort key, id) of the last note read, and the
// connection goes back to the pool before each runs on the batch, so a
// client that reads slowly holds no connection however long it takes.
func (s *Store) ListNotes(ctx context.Context, accountID string, q notes.ListQuery, each func(notes.Note) error) error {
	remaining := q.Limit // zero: every note
	rows := s.batch.Rows
	var after *notes.Note
	if q.After != nil {
		after = &notes.Note{CreatedAt: q.After.CreatedAt, ID: q.After.ID}
	}
	read := 0 // notes read, for the offsets of a relevance listing
	var batch []notes.Note
	for {
		limit := rows
		if q.Limit > 0 {
			limit = min(limit, remaining)
		}
		offset := 0
		if after == nil {
			offset = q.Offset
		}
		if q.Sort == notes.SortRelevance {
			after, offset = nil, q.Offset+read
		}
		var more, early bool
		var err error
		batch, more, early, err = s.listBatch(ctx, accountID, q, after, offset, limit, batch[:0])
		if err != nil {
			return translate(err)
		}
		// A batch cut short by the byte bound sets the size of the next,
		// so that large notes are not read and dropped again; smaller
		// notes grow it back.
		if early {
			rows = max(len(batch), 1)
		} else {
			rows = min(rows*2, s.batch.Rows)
		}
		for _, n := range batch {
			if err := each(n); err != nil {
				return err
			}
		}
		read += len(batch)
		if q.Limit > 0 {
			remaining -= len(batch)
		}
		if !more || len(batch) == 0 || (q.Limit > 0 && remaining <= 0) {
			return nil
		}
		last := batch[len(batch)-1]
		after = &last
		clear(batch) // the notes sent are garbage now
	}
}

// listBatch appends up to limit notes of q to buf: from offset when after
// is nil, else those after it in q's order. more reports that notes may
// follow: the batch is full, or it ended early at the byte bound, which
// early reports. Rows are read one at a time, so that the byte bound
// stops the read, and the connection goes back to the pool on return.
func (s *Store) listBatch(ctx context.Context, accountID string, q notes.ListQuery, after *notes.Note,
	offset, limit int, buf []notes.Note) (_ []notes.Note, more, early bool, _ error) {
	db := s.db.WithContext(ctx)
	rows, err := s.listQuery(db, accountID, q, after, offset, limit).Rows()
	if err != nil {
		return buf, false, false, err
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		var n notes.Note
		if err := db.ScanRows(rows, &n); err != nil {
			return buf, false, false, err
		}
		tidyNote(&n)
		buf = append(buf, n)
		size += noteSize(n)
		if size >= s.batch.Bytes && len(buf) < limit {
			// Close reads and drops the rest of the result on the
			// server's side, not at the client's pace.
			return buf, true, true, rows.Close()
		}
	}
	if err := rows.Err(); err != nil {
		return buf, false, false, err
	}
	return buf, len(buf) == limit, false, nil
}

// noteFilter scopes a listing or count to q's notes of accountID. A tag or
// search condition comes twice: over the account-qualified keys of
// migration 00002, which the GIN indexes hold, so that the scan reads only
// the account's own postings; and plainly, which defines the result (the
// two agree, and the plain one costs a check of the few rows found). The
// search keys are those of migration 00003, which AND every query with a
// key of the account alone: a query that names no word a match must hold
// (a negation) then reads the account's notes, not every account's
// (TestSearchCostIsTheCallersOwn). Both are PostgreSQL functions and
// operators GORM has no form for, hence the SQL conditions.
//
// With a tag or search condition the account is compared bytewise
// (COLLATE "C", the same equality as the column's deterministic collation),
// which no btree on account_id serves. The keyed GIN postings already hold
// only the account's matches; left a btree to use, the planner takes
// account and tag for independent and ANDs the postings with the
// account's whole range in a btree, which read every note of the account:
// at 1,000 notes per account a listing with its count ran at a quarter of
// the rate (bench notes_list_tag, notes_list_q; TestFilteredListingsReadOnlyKeyedPostings).
func noteFilter(accountID string, q notes.ListQuery) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		db = db.Model(&notes.Note{})
		if len(q.Tags) > 0 || q.Search != "" {
			db = db.Where(`account_id COLLATE "C" = ?`, accountID)
		} else {
			db = db.Where("account_id = ?", accountID)
		}
		if len(q.Tags) > 0 {
			tags := pgArray[string](q.Tags)
			db = db.Where("notes_tag_keys(account_id, tags) @> notes_tag_keys(?, ?::text[]) AND tags @> ?", accountID, tags, tags)
		}
		if q.Pinned != nil {
			db = db.Where("pinned = ?", *q.Pinned)
		}
		if q.Trashed {
			db = db.Where("trashed_at IS NOT NULL")
		} else {
			db = db.Where("trashed_at IS NULL")
		}
		if q.Search != "" {
			db = db.Where("notes_account_search_keys(account_id, search) @@ notes_account_search_keys(?, websearch_to_tsquery('english', ?)) AND search @@ websearch_to_tsquery('english', ?)",
				accountID, q.Search, q.Search)
		}
		return db
	}
}

// listQuery is a batch's statement: q's notes in q's order, id breaking
// ties in the last key's direction so that (keys, id) is unique and
// batches and pages are stable; after a note, those that follow it.
func (s *Store) listQuery(db *gorm.DB, accountID string, q notes.ListQuery, after *notes.Note, offset, limit int) *gorm.DB {
	db = db.Scopes(noteFilter(accountID, q))
	if q.Sort == notes.SortRelevance {
		// The rank of the stored vector (title words weigh A, content
		// words B) against the query: an expression GORM has no form for.
		// Batches after the first come by offset (ListNotes), as the
		// rank is no column to continue after.
		return db.Clauses(clause.OrderBy{Expression: clause.Expr{
			SQL: "ts_rank(search, websearch_to_tsquery('english', ?)) DESC, id", Vars: []any{q.Search}}},
			pagedBy{limit: limit, offset: offset})
	}
	keys := q.Sort.Keys()
	if q.Sort == "" {
		keys = notes.SortCreatedAsc.Keys()
	}
	var order clause.OrderBy
	var cols, vals []any
	for _, k := range keys {
		// The domain accepts only its sort fields; a name that is no
		// column of the model never reaches SQL.
		field := s.notes.LookUpField(k.Field)
		if field == nil || field.DBName == "" {
			_ = db.AddError(fmt.Errorf("sort by %q: not a column", k.Field))
			return db
		}
		order.Columns = append(order.Columns, clause.OrderByColumn{Column: clause.Column{Name: field.DBName}, Desc: k.Desc})
		if after != nil {
			v, _ := field.ValueOf(db.Statement.Context, reflect.ValueOf(*after))
			cols, vals = append(cols, clause.Column{Name: field.DBName}), append(vals, v)
		}
	}
	order.Columns = append(order.Columns, clause.OrderByColumn{Column: clause.Column{Name: "id"}, Desc: keys[len(keys)-1].Desc})
	if after != nil {
		cols, vals = append(cols, clause.Column{Name: "id"}), append(vals, after.ID)
		db = db.Where(keysetAfter(keys, cols, vals))
	}
	return db.Clauses(order, pagedBy{limit: limit, offset: offset})
}

// keysetAfter is the condition of the rows after vals (one per key, then
// the id) in the order of keys. When every key runs one way it is one row
// comparison, which follows the index on (account_id, keys, id) and the
// ORDER BY, collation included; else the first column past, or it equal
// and the next past, and so on. GORM has no form for either.
func keysetAfter(keys []notes.SortKey, cols, vals []any) clause.Expr {
	desc := func(i int) bool { return keys[min(i, len(keys)-1)].Desc }
	op := func(i int) string {
		if desc(i) {
			return " < "
		}
		return " > "
	}
	same := true
	for i := range keys {
		same = same && desc(i) == desc(0)
	}
	if same {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
		return clause.Expr{SQL: "(" + marks + ")" + op(0) + "(" + marks + ")", Vars: append(slices.Clone(cols), vals...)}
	}
	var b strings.Builder
	var args []any
	for i := range cols {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(")
		for j := range i {
			b.WriteString("? = ? AND ")
			args = append(args, cols[j], vals[j])
		}
		b.WriteString("?" + op(i) + "?)")
		args = append(args, cols[i], vals[i])
	}
	return clause.Expr{SQL: "(" + b.String() + ")", Vars: args}
}

// pagedBy is the LIMIT and OFFSET of a listing as parameters: GORM writes
// them as literals, and each literal would be a prepared statement of its
// own on every connection.
type pagedBy struct{ limit, offset int }

// Name implements clause.Interface.
func (pagedBy) Name() string { return "LIMIT" }

// Build implements clause.Expression.
func (p pagedBy) Build(b clause.Builder) {
	b.AddVar(b, p.limit)
	if p.offset > 0 {
		b.WriteString(" OFFSET ")
		b.AddVar(b, p.offset)
	}
}

// MergeClause implements clause.Interface.
func (p pagedBy) MergeClause(c *clause.Clause) { c.Expression = p }

// noteSize approximates the memory a note read takes.
func noteSize(n notes.Note) int {
	size := 64 + len(n.ID) + len(n.AccountID) + len(n.Title) + len(n.Content)
	for _, t := range n.Tags {
		size += 16 + len(t)
	}
	return size
}

// CountNotes implements notes.Store.
func (s *Store) CountNotes(ctx context.Context, accountID string, q notes.ListQuery) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Scopes(noteFilter(accountID, q)).Count(&n).Error; err != nil {
		return 0, translate(err)
	}
	return n, nil
}

// DeleteExpiredIdempotencyKeys removes up to batch records that expired
// before now and reports how many went.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time, batch int) (int64, error) {
	// Raw: a batched delete by ctid, which GORM has no form for.
	res := s.db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys WHERE ctid IN (
		SELECT ctid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`, now, batch)
	if res.Error != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", translate(res.Error))
	}
	return res.RowsAffected, nil
}

var _ notes.Store = (*Store)(nil)
