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
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// noteColumns are the columns every statement reads a note from and the
// insert writes, in the order of noteDest; the search vector is never
// sent back.
const noteColumns = "id, account_id, title, content, tags, created_at, updated_at, version"

// The statements on notes are written by hand; only listings and counts
// are assembled, by noteFilter and listSQL. Every one is scoped to an
// account.
const (
	selectNoteSQL = `SELECT ` + noteColumns + ` FROM notes WHERE account_id = $1 AND id = $2`
	lockNoteSQL   = selectNoteSQL + ` FOR UPDATE`
	insertNoteSQL = `INSERT INTO notes (` + noteColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	// updateNoteSQL keeps the tags when $5 is NULL (Update.Tags nil), and
	// checks the version only when $7 is not NULL.
	updateNoteSQL = `UPDATE notes SET title = $3, content = $4, tags = COALESCE($5, tags), updated_at = $6, version = version + 1
		WHERE account_id = $1 AND id = $2 AND ($7::bigint[] IS NULL OR version = ANY($7))
		RETURNING ` + noteColumns
	deleteNoteSQL = `DELETE FROM notes WHERE account_id = $1 AND id = $2 AND ($3::bigint[] IS NULL OR version = ANY($3))`
	noteExistsSQL = `SELECT EXISTS (SELECT 1 FROM notes WHERE account_id = $1 AND id = $2)`
)

// noteDest is the one mapping from a row of noteColumns to a Note: the
// Scan destinations in column order, then tidyNote. The hot reads call
// Scan on pgx's concrete row with these, so that the call is
// devirtualized and the destinations stay on the stack; scanNote, for the
// others, costs an allocation more.
func noteDest(n *notes.Note) [8]any {
	return [8]any{&n.ID, &n.AccountID, &n.Title, &n.Content, &n.Tags, &n.CreatedAt, &n.UpdatedAt, &n.Version}
}

// scanNote reads row into n.
func scanNote(row pgx.Row, n *notes.Note) error {
	dest := noteDest(n)
	if err := row.Scan(dest[:]...); err != nil {
		return err
	}
	tidyNote(n)
	return nil
}

// tidyNote gives a scanned note the form the domain promises: tags never
// nil, times in UTC.
func tidyNote(n *notes.Note) {
	if n.Tags == nil {
		n.Tags = []string{}
	}
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
}

// querier is what the statements on notes run on: a connection, or a
// transaction on it.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertNote is the one insert of a note, with or without an
// idempotency record.
func insertNote(ctx context.Context, q querier, n notes.Note) error {
	tags := n.Tags
	if tags == nil {
		tags = []string{} // the column is NOT NULL
	}
	_, err := q.Exec(ctx, insertNoteSQL, n.ID, n.AccountID, n.Title, n.Content, tags, n.CreatedAt, n.UpdatedAt, n.Version)
	return err
}

// withConn runs f on a pgx connection of the pool. database/sql still
// owns the connection: it comes back to the pool afterwards, and a
// connection f left broken or inside a transaction is discarded there
// (stdlib.Conn reports it invalid).
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

// withTx runs f in a transaction on a pgx connection of the pool, and
// commits when f succeeds.
func (s *Store) withTx(ctx context.Context, f func(pgx.Tx) error) error {
	return s.withConn(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, f)
	})
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
		if err := s.withConn(ctx, func(c *pgx.Conn) error { return insertNote(ctx, c, n) }); err != nil {
			return notes.Note{}, false, translate(err)
		}
		return n, false, nil
	}
	var out notes.Note
	var replayed bool
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		// The transaction-scoped lock tells a concurrent duplicate that
		// the key is in flight instead of making it wait.
		var locked bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", idem.LockID(n.AccountID)).Scan(&locked); err != nil {
			return err
		}
		if !locked {
			return notes.ErrIdempotencyInFlight
		}
		var fingerprint, response []byte
		err := tx.QueryRow(ctx, "SELECT fingerprint, response FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at > $3",
			n.AccountID, idem.Key, n.CreatedAt).Scan(&fingerprint, &response)
		switch {
		case err == nil:
			if string(fingerprint) != string(idem.Fingerprint[:]) {
				return notes.ErrIdempotencyMismatch
			}
			var snap noteSnapshot
			if err := json.Unmarshal(response, &snap); err != nil {
				return fmt.Errorf("decode idempotency record: %w", err)
			}
			out = notes.Note{ID: snap.ID, AccountID: n.AccountID, Title: snap.Title, Content: snap.Content, Tags: snap.Tags,
				CreatedAt: snap.CreatedAt.UTC(), UpdatedAt: snap.UpdatedAt.UTC(), Version: snap.Version}
			if out.Tags == nil {
				out.Tags = []string{}
			}
			replayed = true
			return nil
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if err := insertNote(ctx, tx, n); err != nil {
			return err
		}
		snap, err := json.Marshal(noteSnapshot{ID: n.ID, Title: n.Title, Content: n.Content, Tags: n.Tags,
			CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Version: n.Version})
		if err != nil {
			return fmt.Errorf("encode idempotency record: %w", err)
		}
		// An expired record of the same key is replaced.
		_, err = tx.Exec(ctx, `INSERT INTO idempotency_keys (account_id, key, fingerprint, note_id, response, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, note_id = EXCLUDED.note_id,
				response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
			n.AccountID, idem.Key, idem.Fingerprint[:], n.ID, string(snap), n.CreatedAt, idem.ExpiresAt)
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

// GetNote implements notes.Store.
func (s *Store) GetNote(ctx context.Context, accountID, id string) (notes.Note, error) {
	var n notes.Note
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		dest := noteDest(&n)
		return c.QueryRow(ctx, selectNoteSQL, accountID, id).Scan(dest[:]...)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	tidyNote(&n)
	return n, nil
}

// UpdateNote implements notes.Store.
func (s *Store) UpdateNote(ctx context.Context, accountID, id string, u notes.Update, versions []int64) (notes.Note, error) {
	var n notes.Note
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		err := updateNote(ctx, c, accountID, id, u, versions, &n)
		if errors.Is(err, pgx.ErrNoRows) {
			return missOrMismatch(ctx, c, accountID, id)
		}
		return err
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return n, nil
}

// updateNote writes u over the note and bumps its version into out, when
// the note is at one of versions or versions is nil; otherwise it is
// pgx.ErrNoRows.
func updateNote(ctx context.Context, q querier, accountID, id string, u notes.Update, versions []int64, out *notes.Note) error {
	// A nil slice is sent as NULL: no version check, or keep the tags.
	return scanNote(q.QueryRow(ctx, updateNoteSQL, accountID, id, u.Title, u.Content, u.Tags, u.UpdatedAt, versions), out)
}

// missOrMismatch explains a conditional write that touched no row.
func missOrMismatch(ctx context.Context, q querier, accountID, id string) error {
	var exists bool
	if err := q.QueryRow(ctx, noteExistsSQL, accountID, id).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return notes.ErrNotFound
	}
	return notes.ErrPreconditionFailed
}

// ModifyNote implements notes.Store.
func (s *Store) ModifyNote(ctx context.Context, accountID, id string, change func(notes.Note) (notes.Update, error)) (notes.Note, error) {
	var out notes.Note
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var cur notes.Note
		if err := scanNote(tx.QueryRow(ctx, lockNoteSQL, accountID, id), &cur); err != nil {
			return err
		}
		u, err := change(cur)
		if err != nil {
			return err
		}
		return updateNote(ctx, tx, accountID, id, u, nil, &out)
	})
	if err != nil {
		return notes.Note{}, translate(err)
	}
	return out, nil
}

// DeleteNote implements notes.Store.
func (s *Store) DeleteNote(ctx context.Context, accountID, id string, versions []int64) error {
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, deleteNoteSQL, accountID, id, versions)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return missOrMismatch(ctx, c, accountID, id)
		}
		return nil
	})
	return translate(err)
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
			dest := noteDest(&n)
			if err := rows.Scan(dest[:]...); err != nil {
				return err
			}
			tidyNote(&n)
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

// noteFilter is the WHERE clause of q's filters for accountID, the one
// listings and counts share. It is built from whitelisted parts only;
// every value is a parameter.
type noteFilter struct {
	b    strings.Builder
	args []any
}

// newNoteFilter is q's filter for accountID. A tag or search condition
// comes twice: over the account-qualified keys of migration 00002, which
// the GIN indexes hold, so that the scan reads only the account's own
// postings; and plainly, which defines the result (the two agree, and the
// plain one costs a check of the few rows found). The search keys are
// those of migration 00003, which AND every query with a key of the
// account alone: a query that names no word a match must hold (a
// negation) then reads the account's notes, not every account's
// (TestSearchCostIsTheCallersOwn).
//
// With a tag or search condition the account is compared bytewise
// (COLLATE "C", the same equality as the column's deterministic collation),
// which no btree on account_id serves. The keyed GIN postings already hold
// only the account's matches; left a btree to use, the planner takes
// account and tag for independent and ANDs the postings with the
// account's whole range in a btree, which read every note of the account:
// at 1,000 notes per account a listing with its count ran at a quarter of
// the rate (bench notes_list_tag, notes_list_q; TestFilteredListingsReadOnlyKeyedPostings).
func newNoteFilter(accountID string, q notes.ListQuery) *noteFilter {
	f := &noteFilter{args: []any{accountID}}
	if len(q.Tags) > 0 || q.Search != "" {
		f.b.WriteString(` WHERE account_id COLLATE "C" = $1`)
	} else {
		f.b.WriteString(" WHERE account_id = $1")
	}
	if len(q.Tags) > 0 {
		p := f.arg(q.Tags)
		f.b.WriteString(" AND notes_tag_keys(account_id, tags) @> notes_tag_keys($1, " + p + "::text[]) AND tags @> " + p)
	}
	if q.Search != "" {
		p := f.arg(q.Search)
		f.b.WriteString(" AND notes_account_search_keys(account_id, search) @@ notes_account_search_keys($1, websearch_to_tsquery('english', " + p +
			")) AND search @@ websearch_to_tsquery('english', " + p + ")")
	}
	return f
}

// arg adds v as the next parameter and returns its placeholder.
func (f *noteFilter) arg(v any) string {
	f.args = append(f.args, v)
	return "$" + strconv.Itoa(len(f.args))
}

// listSQL builds a batch's statement.
func listSQL(accountID string, q notes.ListQuery, srt listSort, after *notes.Note, offset, limit int) (string, []any) {
	f := newNoteFilter(accountID, q)
	dir, cmp := "", ">"
	if srt.desc {
		dir, cmp = " DESC", "<"
	}
	if after != nil {
		// A row comparison follows the index on (account_id, key, id) and
		// the ORDER BY below, collation included.
		f.b.WriteString(" AND (" + srt.column + ", id) " + cmp + " (" + f.arg(srt.key(*after)) + ", " + f.arg(after.ID) + ")")
	}
	f.b.WriteString(" ORDER BY " + srt.column + dir + ", id" + dir + " LIMIT " + f.arg(limit))
	if offset > 0 {
		f.b.WriteString(" OFFSET " + f.arg(offset))
	}
	return "SELECT " + noteColumns + " FROM notes" + f.b.String(), f.args
}

// countSQL builds the statement that counts q's notes.
func countSQL(accountID string, q notes.ListQuery) (string, []any) {
	f := newNoteFilter(accountID, q)
	return "SELECT count(*) FROM notes" + f.b.String(), f.args
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
	query, args := countSQL(accountID, q)
	var n int64
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, query, args...).Scan(&n)
	})
	if err != nil {
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
