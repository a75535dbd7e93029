// Command minimalnotes is the ceiling of the notes workloads: the least a
// Go server can do for the same requests on the same machine. It is
// net/http, a pgx pool and the statements notes-svc runs (the account-scoped
// SELECT by id, the INSERT with its event in one statement, and for a
// listing with limit the count and the page query), answering the same JSON shape, with no authentication,
// logging, metrics, request ids, deadlines or validation beyond what the
// statements need. The account comes from the X-Account-ID header.
//
//	minimalnotes -addr 127.0.0.1:18091 -db postgres://...
//
// The statements are copied from what notes-svc runs (its GORM model
// builds them in internal/notesdb): keep them in step with it, or the
// ceiling measures different work. make bench captures the SQL both
// servers run for the same probe requests and stops when it differs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
	"github.com/tickerdesk/tickerdesk/pkg/httpserve"
)

func main() {
	cmdmain.Run("minimalnotes", run)
}

// The statements of notes-svc/internal/notesdb, byte for byte, as GORM
// builds them from the model (make bench fails when they differ: it
// captures both servers' SQL for the same requests).
const (
	noteColumns   = `"id","account_id","title","content","tags","created_at","updated_at","version","pinned","trashed_at"`
	selectNoteSQL = `SELECT ` + noteColumns + ` FROM "notes" WHERE account_id = $1 AND id = $2`
	// Every change appends its event atomically with it: notes-svc joins
	// the two inserts in one statement, one round trip.
	createSQL = `WITH note AS (INSERT INTO "notes" (` + noteColumns + `) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)) ` +
		`INSERT INTO "events" ("id","account_id","type","created_at","data") VALUES ($11,$12,$13,$14,$15) RETURNING "seq"`
	// A listing's filter: the account and, for the tag filter, its keyed
	// postings and the tags; for search, the account's search keys and
	// the search vector; untrashed notes only. $1 and $2 are the account,
	// $3 and $4 the tags or the query.
	tagFilter    = ` WHERE account_id COLLATE "C" = $1 AND (notes_tag_keys(account_id, tags) @> notes_tag_keys($2, $3::text[]) AND tags @> $4) AND trashed_at IS NULL`
	searchFilter = ` WHERE account_id COLLATE "C" = $1 AND trashed_at IS NULL AND (notes_account_search_keys(account_id, search) @@ notes_account_search_keys($2, websearch_to_tsquery('english', $3)) AND search @@ websearch_to_tsquery('english', $4))`
	pageColumns  = `"notes"."id","notes"."account_id","notes"."title","notes"."content","notes"."tags","notes"."created_at","notes"."updated_at","notes"."version","notes"."pinned","notes"."trashed_at"`
	pageSuffix   = ` ORDER BY "created_at","id" LIMIT $5`
)

func run(ctx context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("minimalnotes", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18091", "listen address")
	dsn := fs.String("db", "", "PostgreSQL URL of the notes database")
	conns := fs.Int("conns", 20, "pool size (notes-svc's default NOTES_DB_MAX_OPEN_CONNS)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		return errors.New("bad -db URL")
	}
	cfg.MaxConns = int32(*conns)
	cfg.MinConns = int32(*conns)
	// The session settings of notesdb.Open, so that both plan alike.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	cfg.ConnConfig.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open pool: %w", err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return httpserve.Run(ctx, httpserve.Options{
		Addr:            *addr,
		Server:          &http.Server{Handler: &server{pool: pool}, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second},
		ShutdownTimeout: 5 * time.Second,
		Log:             slog.New(slog.NewTextHandler(stdout, nil)).With("cmd", "minimalnotes"),
	})
}

type server struct{ pool *pgxpool.Pool }

// note is a row of notes in the shape the API writes.
type note struct {
	ID        string     `json:"id"`
	AccountID string     `json:"-"`
	Title     string     `json:"title"`
	Content   string     `json:"content"`
	Tags      []string   `json:"tags"`
	CreatedAt time.Time  `json:"-"`
	UpdatedAt time.Time  `json:"-"`
	Version   int64      `json:"-"`
	TrashedAt *time.Time `json:"-"`
	Created   string     `json:"created_at"`
	Updated   string     `json:"updated_at"`
	Pinned    bool       `json:"pinned"`
	Trashed   *string    `json:"trashed_at"`
}

func (n *note) dest() []any {
	return []any{&n.ID, &n.AccountID, &n.Title, &n.Content, &n.Tags, &n.CreatedAt, &n.UpdatedAt, &n.Version, &n.Pinned, &n.TrashedAt}
}

const timeFormat = "2006-01-02T15:04:05Z"

func (n *note) format() {
	if n.Tags == nil {
		n.Tags = []string{}
	}
	n.Created = n.CreatedAt.UTC().Format(timeFormat)
	n.Updated = n.UpdatedAt.UTC().Format(timeFormat)
	if n.TrashedAt != nil {
		t := n.TrashedAt.UTC().Format(timeFormat)
		n.Trashed = &t
	}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.WriteHeader(http.StatusOK)
		return
	}
	account := r.Header.Get("X-Account-ID")
	if account == "" {
		http.Error(w, "X-Account-ID required", http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/notes/"):
		s.get(w, r, account, strings.TrimPrefix(r.URL.Path, "/v1/notes/"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/notes":
		s.list(w, r, account)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/notes":
		s.create(w, r, account)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any, etag string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if etag != "" {
		h.Set("ETag", etag)
	}
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (s *server) get(w http.ResponseWriter, r *http.Request, account, id string) {
	var n note
	err := s.pool.QueryRow(r.Context(), selectNoteSQL, account, id).Scan(n.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "database error", http.StatusInternalServerError)
		return
	}
	n.format()
	writeJSON(w, http.StatusOK, &n, `"`+strconv.FormatInt(n.Version, 10)+`"`)
}

type draft struct {
	Title   string   `json:"title"`
	Content string   `json:"content"`
	Tags    []string `json:"tags"`
}

func (s *server) create(w http.ResponseWriter, r *http.Request, account string) {
	var d draft
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&d); err != nil || d.Title == "" {
		http.Error(w, "bad note", http.StatusBadRequest)
		return
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	now := time.Now().UTC()
	noteID, err := newID()
	if err != nil {
		http.Error(w, "id error", http.StatusInternalServerError)
		return
	}
	eventID, err := newID()
	if err != nil {
		http.Error(w, "id error", http.StatusInternalServerError)
		return
	}
	n := note{ID: "note_" + noteID, AccountID: account, Title: d.Title, Content: d.Content, Tags: d.Tags,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	n.format()
	event, err := json.Marshal(struct {
		Object *note `json:"object"`
	}{&n})
	if err != nil {
		http.Error(w, "encode error", http.StatusInternalServerError)
		return
	}
	var seq int64
	if err := s.pool.QueryRow(r.Context(), createSQL, n.ID, n.AccountID, n.Title, n.Content, n.Tags, now, now, n.Version, n.Pinned, n.TrashedAt,
		"evt_"+eventID, n.AccountID, "note.created", now, event).Scan(&seq); err != nil {
		http.Error(w, "database error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Location", "/v1/notes/"+n.ID)
	writeJSON(w, http.StatusCreated, &n, `"1"`)
}

// list answers ?tag=T&limit=N or ?q=Q&limit=N as notes-svc does with a
// limit: the exact count for X-Total-Count, then the first page.
func (s *server) list(w http.ResponseWriter, r *http.Request, account string) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 {
		http.Error(w, "limit required", http.StatusBadRequest)
		return
	}
	var filter string
	var arg any
	switch {
	case q.Has("tag"):
		filter, arg = tagFilter, q["tag"]
	case q.Has("q"):
		filter, arg = searchFilter, q.Get("q")
	default:
		http.Error(w, "tag or q required", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM "notes"`+filter, account, account, arg, arg).Scan(&total); err != nil {
		http.Error(w, "database error", http.StatusInternalServerError)
		return
	}
	rows, err := s.pool.Query(ctx, `SELECT `+pageColumns+` FROM "notes"`+filter+pageSuffix, account, account, arg, arg, limit)
	if err != nil {
		http.Error(w, "database error", http.StatusInternalServerError)
		return
	}
	out := make([]note, 0, limit)
	for rows.Next() {
		var n note
		if err := rows.Scan(n.dest()...); err != nil {
			break
		}
		n.format()
		out = append(out, n)
	}
	rows.Close()
	if rows.Err() != nil {
		http.Error(w, "database error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	writeJSON(w, http.StatusOK, out, "")
}

// newID is a UUIDv7 in the 26-character ULID encoding, made as notes-svc
// makes its ids: by google/uuid's NewV7, whose ids rise strictly within a
// millisecond too (a sub-millisecond sequence), so that every insert
// lands after the last key of the primary-key index, where PostgreSQL
// keeps the rightmost leaf at hand. Ids ordered only by the millisecond,
// with random bits below, cost it a descent and more page splits per
// insert: the minimal server once made them so, and its inserts cost
// PostgreSQL more than the service's.
func newID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var hi, lo uint64
	for i := range 8 {
		hi = hi<<8 | uint64(u[i])
		lo = lo<<8 | uint64(u[i+8])
	}
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:]), nil
}
