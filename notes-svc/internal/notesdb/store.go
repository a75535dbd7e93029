package notesdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
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

// noteColumns are the columns a note is read from; the search vector is
// never sent back.
var noteColumns = []string{"id", "account_id", "title", "content", "tags", "created_at", "updated_at", "version"}

type noteRow struct {
	ID        string
	AccountID string
	Title     string
	Content   string
	Tags      textArray
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

func (noteRow) TableName() string { return "notes" }

func (r noteRow) note() notes.Note {
	tags := []string(r.Tags)
	if tags == nil {
		tags = []string{}
	}
	return notes.Note{ID: r.ID, AccountID: r.AccountID, Title: r.Title, Content: r.Content, Tags: tags,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version}
}

func rowOf(n notes.Note) noteRow {
	return noteRow{ID: n.ID, AccountID: n.AccountID, Title: n.Title, Content: n.Content, Tags: textArray(n.Tags),
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Version: n.Version}
}

// noteSnapshot is the note an idempotency record replays.
type noteSnapshot struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Tags      []string  `json:"tags"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Version   int64     `json:"version"`
}

// CreateNote implements notes.Store.
func (s *Store) CreateNote(ctx context.Context, n notes.Note, idem *notes.IdempotencyRecord) (notes.Note, bool, error) {
	if idem == nil {
		err := s.withConn(ctx, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, insertNoteSQL, n.ID, n.AccountID, n.Title, n.Content, tagsOf(n.Tags), n.CreatedAt, n.UpdatedAt, n.Version)
			return err
		})
		if err != nil {
			return notes.Note{}, false, translate(err)
		}
		return n, false, nil
	}
	var out notes.Note
	var replayed bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The transaction-scoped lock tells a concurrent duplicate that
		// the key is in flight instead of making it wait.
		var locked bool
		if err := tx.Raw("SELECT pg_try_advisory_xact_lock(?)", idem.LockID(n.AccountID)).Scan(&locked).Error; err != nil {
			return err
		}
		if !locked {
			return notes.ErrIdempotencyInFlight
		}
		var rec struct {
			Fingerprint []byte
			Response    []byte
		}
		res := tx.Raw("SELECT fingerprint, response FROM idempotency_keys WHERE account_id = ? AND key = ? AND expires_at > ?",
			n.AccountID, idem.Key, n.CreatedAt).Scan(&rec)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected > 0 {
			if string(rec.Fingerprint) != string(idem.Fingerprint[:]) {
				return notes.ErrIdempotencyMismatch
			}
			var snap noteSnapshot
			if err := json.Unmarshal(rec.Response, &snap); err != nil {
				return fmt.Errorf("decode idempotency record: %w", err)
			}
			out = notes.Note{ID: snap.ID, AccountID: n.AccountID, Title: snap.Title, Content: snap.Content, Tags: snap.Tags,
				CreatedAt: snap.CreatedAt.UTC(), UpdatedAt: snap.UpdatedAt.UTC(), Version: snap.Version}
			if out.Tags == nil {
				out.Tags = []string{}
			}
			replayed = true
			return nil
		}
		if err := tx.Create(new(rowOf(n))).Error; err != nil {
			return err
		}
		snap, err := json.Marshal(noteSnapshot{ID: n.ID, Title: n.Title, Content: n.Content, Tags: n.Tags,
			CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Version: n.Version})
		if err != nil {
			return fmt.Errorf("encode idempotency record: %w", err)
		}
		// An expired record of the same key is replaced.
		err = tx.Exec(`INSERT INTO idempotency_keys (account_id, key, fingerprint, note_id, response, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, note_id = EXCLUDED.note_id,
				response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
			n.AccountID, idem.Key, idem.Fingerprint[:], n.ID, string(snap), n.CreatedAt, idem.ExpiresAt).Error
		if err != nil {
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

// The hottest statements are written by hand and run on the pgx connection
// under database/sql: no GORM statement building or reflection, no
// database/sql value conversion, and pgx's per-connection statement cache
// prepares each once. Tenancy scoping is the same as everywhere else.
const (
	selectNoteSQL = `SELECT id, account_id, title, content, tags, created_at, updated_at, version
		FROM notes WHERE account_id = $1 AND id = $2`
	insertNoteSQL = `INSERT INTO notes (id, account_id, title, content, tags, created_at, updated_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
)

// tagsOf never sends NULL for the NOT NULL tags column.
func tagsOf(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

// withConn runs f on a pgx connection of the pool. database/sql still
// owns the connection: it comes back to the pool afterwards, and a
// connection f left broken is discarded there (stdlib.Conn reports it
// invalid).
func (s *Store) withConn(ctx context.Context, f func(*pgx.Conn) error) error {
	conn, err := s.sql.Conn(ctx)
	if err != nil {
		return err
	}
	err = conn.Raw(func(dc any) error { return f(dc.(*stdlib.Conn).Conn()) })
	if cerr := conn.Close(); err == nil && !errors.Is(cerr, sql.ErrConnDone) {
		err = cerr
	}
	return err
}

// GetNote implements notes.Store.
func (s *Store) GetNote(ctx context.Context, accountID, id string) (notes.Note, error) {
	var n notes.Note
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, selectNoteSQL, accountID, id).
			Scan(&n.ID, &n.AccountID, &n.Title, &n.Content, &n.Tags, &n.CreatedAt, &n.UpdatedAt, &n.Version)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	if n.Tags == nil {
		n.Tags = []string{}
	}
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
	return n, nil
}

// UpdateNote implements notes.Store.
func (s *Store) UpdateNote(ctx context.Context, accountID, id string, u notes.Update, versions []int64) (notes.Note, error) {
	set := updateSet(u)
	var rows []noteRow
	q := s.db.WithContext(ctx).Model(&rows).Clauses(returningNote()).Where("account_id = ? AND id = ?", accountID, id)
	if versions != nil {
		q = q.Where("version IN ?", versions)
	}
	res := q.Updates(set)
	if res.Error != nil {
		return notes.Note{}, translate(res.Error)
	}
	if len(rows) == 0 {
		return notes.Note{}, s.missOrMismatch(ctx, accountID, id)
	}
	return rows[0].note(), nil
}

func returningNote() clause.Returning {
	cols := make([]clause.Column, len(noteColumns))
	for i, c := range noteColumns {
		cols[i] = clause.Column{Name: c}
	}
	return clause.Returning{Columns: cols}
}

// missOrMismatch explains a conditional write that touched no row.
func (s *Store) missOrMismatch(ctx context.Context, accountID, id string) error {
	var n int64
	err := s.db.WithContext(ctx).Model(&noteRow{}).Where("account_id = ? AND id = ?", accountID, id).Count(&n).Error
	switch {
	case err != nil:
		return translate(err)
	case n == 0:
		return notes.ErrNotFound
	default:
		return notes.ErrPreconditionFailed
	}
}

// ModifyNote implements notes.Store.
func (s *Store) ModifyNote(ctx context.Context, accountID, id string, change func(notes.Note) (notes.Update, error)) (notes.Note, error) {
	var out notes.Note
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur noteRow
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select(noteColumns).
			Where("account_id = ? AND id = ?", accountID, id).Take(&cur).Error
		if err != nil {
			return err
		}
		u, err := change(cur.note())
		if err != nil {
			return err
		}
		var rows []noteRow
		res := tx.Model(&rows).Clauses(returningNote()).Where("account_id = ? AND id = ?", accountID, id).Updates(updateSet(u))
		if res.Error != nil {
			return res.Error
		}
		if len(rows) == 0 {
			return notes.ErrNotFound
		}
		out = rows[0].note()
		return nil
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return out, nil
}

func updateSet(u notes.Update) map[string]any {
	set := map[string]any{
		"title":      u.Title,
		"content":    u.Content,
		"updated_at": u.UpdatedAt,
		"version":    gorm.Expr("version + 1"),
	}
	if u.Tags != nil {
		set["tags"] = textArray(u.Tags)
	}
	return set
}

// DeleteNote implements notes.Store.
func (s *Store) DeleteNote(ctx context.Context, accountID, id string, versions []int64) error {
	q := s.db.WithContext(ctx).Where("account_id = ? AND id = ?", accountID, id)
	if versions != nil {
		q = q.Where("version IN ?", versions)
	}
	res := q.Delete(&noteRow{})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return s.missOrMismatch(ctx, accountID, id)
	}
	return nil
}

func (s *Store) filtered(ctx context.Context, accountID string, q notes.ListQuery) *gorm.DB {
	db := s.db.WithContext(ctx).Model(&noteRow{}).Where("account_id = ?", accountID)
	if len(q.Tags) > 0 {
		db = db.Where("tags @> ?::text[]", textArray(q.Tags))
	}
	if q.Search != "" {
		db = db.Where("search @@ websearch_to_tsquery('english', ?)", q.Search)
	}
	return db
}

// listSort is one whitelisted listing order: its sort key, direction, and
// the key of a note for the keyset condition of the next batch. id breaks
// ties, so that (key, id) is unique and batches and pages are stable.
type listSort struct {
	column string
	desc   bool
	key    func(notes.Note) any
}

var listSorts = map[notes.Sort]listSort{
	notes.SortCreatedAsc:  {column: "created_at", key: func(n notes.Note) any { return n.CreatedAt }},
	notes.SortCreatedDesc: {column: "created_at", desc: true, key: func(n notes.Note) any { return n.CreatedAt }},
	notes.SortUpdatedAsc:  {column: "updated_at", key: func(n notes.Note) any { return n.UpdatedAt }},
	notes.SortUpdatedDesc: {column: "updated_at", desc: true, key: func(n notes.Note) any { return n.UpdatedAt }},
	notes.SortTitle:       {column: "title", key: func(n notes.Note) any { return n.Title }},
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
	srt, ok := listSorts[q.Sort]
	if !ok {
		srt = listSorts[notes.SortCreatedAsc]
	}
	remaining := q.Limit // zero: every note
	rows := s.batch.Rows
	var after *notes.Note
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
		var more, early bool
		var err error
		batch, more, early, err = s.listBatch(ctx, accountID, q, srt, after, offset, limit, batch[:0])
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
// is nil, else those after it in srt's order. more reports that notes may
// follow: the batch is full, or it ended early at the byte bound, which
// early reports.
func (s *Store) listBatch(ctx context.Context, accountID string, q notes.ListQuery, srt listSort, after *notes.Note,
	offset, limit int, buf []notes.Note) (_ []notes.Note, more, early bool, _ error) {
	query, args := listSQL(accountID, q, srt, after, offset, limit)
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		size := 0
		for rows.Next() {
			var n notes.Note
			if err := rows.Scan(&n.ID, &n.AccountID, &n.Title, &n.Content, &n.Tags, &n.CreatedAt, &n.UpdatedAt, &n.Version); err != nil {
				return err
			}
			if n.Tags == nil {
				n.Tags = []string{}
			}
			n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
			buf = append(buf, n)
			size += noteSize(n)
			if size >= s.batch.Bytes && len(buf) < limit {
				// Close reads and drops the rest of the result on the
				// server's side, not at the client's pace.
				more, early = true, true
				rows.Close()
				return rows.Err()
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		more = len(buf) == limit
		return nil
	})
	return buf, more, early, err
}

// listSQL builds a batch's statement from whitelisted parts only; every
// value is a parameter.
func listSQL(accountID string, q notes.ListQuery, srt listSort, after *notes.Note, offset, limit int) (string, []any) {
	var b strings.Builder
	args := []any{accountID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT id, account_id, title, content, tags, created_at, updated_at, version FROM notes WHERE account_id = $1`)
	if len(q.Tags) > 0 {
		b.WriteString(" AND tags @> " + arg(q.Tags))
	}
	if q.Search != "" {
		b.WriteString(" AND search @@ websearch_to_tsquery('english', " + arg(q.Search) + ")")
	}
	dir, cmp := "", ">"
	if srt.desc {
		dir, cmp = " DESC", "<"
	}
	if after != nil {
		// A row comparison follows the index on (account_id, key, id) and
		// the ORDER BY below, collation included.
		b.WriteString(" AND (" + srt.column + ", id) " + cmp + " (" + arg(srt.key(*after)) + ", " + arg(after.ID) + ")")
	}
	b.WriteString(" ORDER BY " + srt.column + dir + ", id" + dir + " LIMIT " + arg(limit))
	if offset > 0 {
		b.WriteString(" OFFSET " + arg(offset))
	}
	return b.String(), args
}

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
	if err := s.filtered(ctx, accountID, q).Count(&n).Error; err != nil {
		return 0, translate(err)
	}
	return n, nil
}

// DeleteExpiredIdempotencyKeys removes up to batch records that expired
// before now and reports how many went.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time, batch int) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys WHERE ctid IN (
		SELECT ctid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`, now, batch)
	if res.Error != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", translate(res.Error))
	}
	return res.RowsAffected, nil
}

var _ notes.Store = (*Store)(nil)
