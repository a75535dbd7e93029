package notesdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// orderBy is the whitelist of sort clauses; id breaks ties so that paging
// is stable.
var orderBy = map[notes.Sort]string{
	notes.SortCreatedAsc:  "created_at, id",
	notes.SortCreatedDesc: "created_at DESC, id DESC",
	notes.SortUpdatedAsc:  "updated_at, id",
	notes.SortUpdatedDesc: "updated_at DESC, id DESC",
	notes.SortTitle:       "title, id",
}

// ListNotes implements notes.Store. Rows are decoded one at a time as the
// driver reads them from the connection.
func (s *Store) ListNotes(ctx context.Context, accountID string, q notes.ListQuery, each func(notes.Note) error) error {
	order, ok := orderBy[q.Sort]
	if !ok {
		order = orderBy[notes.SortCreatedAsc]
	}
	db := s.filtered(ctx, accountID, q).Select(noteColumns).Order(order)
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	if q.Offset > 0 {
		db = db.Offset(q.Offset)
	}
	rows, err := db.Rows()
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r noteRow
		if err := rows.Scan(&r.ID, &r.AccountID, &r.Title, &r.Content, &r.Tags, &r.CreatedAt, &r.UpdatedAt, &r.Version); err != nil {
			return translate(err)
		}
		if err := each(r.note()); err != nil {
			return err
		}
	}
	return translate(rows.Err())
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
