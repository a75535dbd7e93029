package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/etag"
	"github.com/tickerdesk/tickerdesk/pkg/httpedge"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// timeFormat is the spec's UTC ISO 8601 form.
const timeFormat = "2006-01-02T15:04:05Z"

// MaxListLimit bounds limit on the listing.
const MaxListLimit = 1000

func etagOf(n notes.Note) string { return `"` + strconv.FormatInt(n.Version, 10) + `"` }

func accountOf(c *gin.Context) string {
	p, _ := auth.PrincipalFrom(c.Request.Context())
	return p.AccountID
}

// writeJSON writes v without HTML escaping, so text comes back as sent.
func writeJSON(c *gin.Context, status int, v any) {
	c.Header("Content-Type", "application/json")
	c.Status(status)
	enc := json.NewEncoder(c.Writer)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a write error means the client left
}

// autoLengthMax is the largest body net/http measures itself: a handler's
// writes go through a buffer of this size, and a response that fits and
// was not flushed gets its Content-Length from net/http, outside the
// header map ("If the total size of all written data is under a few KB
// and there are no Flush calls, the Content-Length header is added
// automatically"). A larger body would go out chunked without ours.
const autoLengthMax = 2048

func (s *Server) writeNote(c *gin.Context, status int, n notes.Note) {
	e := s.encoders.Get().(*noteEncoder)
	defer func() {
		if e.buf.Cap() <= maxPooledNote {
			s.encoders.Put(e)
		}
	}()
	body := e.encode(n)
	// Header keys in canonical form skip the canonicalization of Set, and
	// the values share one backing array: one allocation, not one a header.
	// A note's answer already carries eight headers with the rate limit's
	// (pkg/keyrate) and the request id: a ninth in the map would grow it
	// past Go's small-map size on every read, which net/http then copies
	// and sorts. Leaving a short body's Content-Length to net/http keeps it
	// at eight: notes_get went from 16,698 to 17,045 req/s (medians of five
	// interleaved 7 s runs on the bench's machine).
	h := c.Writer.Header()
	v := [...]string{etagOf(n), "application/json"}
	h["Etag"] = v[0:1:1]
	h["Content-Type"] = v[1:2:2]
	if len(body) > autoLengthMax {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	if status == http.StatusCreated {
		h["Location"] = []string{"/v1/notes/" + n.ID}
	}
	c.Status(status)
	_, _ = c.Writer.Write(body) // a write error means the client left
}

func (s *Server) createNote(c *gin.Context) {
	key, err := idempotencyKey(c.Request.Header)
	if err != nil {
		s.fail(c, err)
		return
	}
	d, ok := decodeBody(s, c, mediaJSON, decodeDraft)
	if !ok {
		return
	}
	create := func(ctx context.Context) (created, error) {
		n, replayed, err := s.notes.Create(ctx, accountOf(c), d, key)
		return created{n, replayed}, err
	}
	var res created
	if key != "" {
		// A key makes a second try safe: if the first committed, the
		// second replays it. Without one the outcome of a commit cut off
		// by a failover is unknown, and the client gets 503 to decide.
		res, err = postgres.RetryOnce(c.Request.Context(), create)
	} else {
		res, err = create(c.Request.Context())
	}
	n, replayed := res.note, res.replayed
	if err != nil {
		s.fail(c, err)
		return
	}
	if replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	s.writeNote(c, http.StatusCreated, n)
}

// created is a Create's result, as one value for postgres.RetryOnce.
type created struct {
	note     notes.Note
	replayed bool
}

// idempotencyKey reads the Idempotency-Key header: either a bare token
// (Stripe) or an RFC 8941 string (the IETF draft), of 1..255 printable
// ASCII characters.
func idempotencyKey(h http.Header) (string, error) {
	vals := h.Values("Idempotency-Key")
	if len(vals) == 0 {
		return "", nil
	}
	bad := func(detail string) error {
		return &requestError{status: http.StatusBadRequest, field: "Idempotency-Key", detail: detail}
	}
	if len(vals) > 1 {
		return "", bad("send Idempotency-Key once")
	}
	key := strings.TrimSpace(vals[0])
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if key == "" || len(key) > notes.MaxIdempotencyKeyLen {
		return "", bad("Idempotency-Key must be 1..255 characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", bad("Idempotency-Key must be printable ASCII")
		}
	}
	return key, nil
}

func (s *Server) getNote(c *gin.Context) {
	// A read is retried once when the database was lost mid-failover.
	n, err := postgres.RetryOnce(c.Request.Context(), func(ctx context.Context) (notes.Note, error) {
		return s.notes.Get(ctx, accountOf(c), c.Param("id"))
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	// The tag is made only for a conditional request: writeNote makes its
	// own, and most reads carry no If-None-Match.
	if inm := c.Request.Header["If-None-Match"]; len(inm) > 0 {
		if tag := etagOf(n); etag.NoneMatch(inm, tag) {
			c.Header("ETag", tag)
			c.Status(http.StatusNotModified)
			return
		}
	}
	s.writeNote(c, http.StatusOK, n)
}

// decodeBody reads a request body of type media and decodes it. It
// answers a failure itself and reports false; a merge-patch body that
// could not be read is answered with the media type to send.
func decodeBody[T any](s *Server, c *gin.Context, media string, decode func([]byte) (T, error)) (T, bool) {
	body, err := readBody(c.Writer, c.Request, media)
	if err != nil {
		if media == mediaMergePatch {
			c.Header("Accept-Patch", mediaMergePatch)
		}
		s.fail(c, err)
		var zero T
		return zero, false
	}
	v, err := decode(body)
	if err != nil {
		s.fail(c, err)
		return v, false
	}
	return v, true
}

func (s *Server) replaceNote(c *gin.Context) {
	updateNote(s, c, mediaJSON, decodeDraft, s.notes.Replace)
}

func (s *Server) patchNote(c *gin.Context) {
	updateNote(s, c, mediaMergePatch, decodePatch, s.notes.Patch)
}

// updateNote is a full or partial update: the body, in media, decoded to
// T, applied to the note of the path under its If-Match condition.
func updateNote[T any](s *Server, c *gin.Context, media string, decode func([]byte) (T, error),
	apply func(ctx context.Context, accountID, id string, v T, cond notes.Condition) (notes.Note, error)) {
	v, ok := decodeBody(s, c, media, decode)
	if !ok {
		return
	}
	cond := ifMatch(c.Request.Header)
	write := func(ctx context.Context) (notes.Note, error) { return apply(ctx, accountOf(c), c.Param("id"), v, cond) }
	var n notes.Note
	var err error
	if cond.Present {
		// If-Match makes a second try safe: it applies only to the version
		// the first would have changed, so a first try that did commit
		// turns the second into 412, never into a second update.
		n, err = postgres.RetryOnce(c.Request.Context(), write)
	} else {
		n, err = write(c.Request.Context())
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeNote(c, http.StatusOK, n)
}

// deleteJSON confirms a deletion, as the spec shows it.
type deleteJSON struct {
	Message string `json:"message"`
	ID      string `json:"id"`
}

func (s *Server) deleteNote(c *gin.Context) {
	id := c.Param("id")
	if err := s.notes.Delete(c.Request.Context(), accountOf(c), id, ifMatch(c.Request.Header)); err != nil {
		s.fail(c, err)
		return
	}
	writeJSON(c, http.StatusOK, deleteJSON{Message: "Note deleted permanently.", ID: id})
}

// ifMatch parses If-Match into a precondition. Weak tags never match, as
// RFC 9110 requires strong comparison; tags this server never issues
// cannot match either.
func ifMatch(h http.Header) notes.Condition {
	vals := h.Values("If-Match")
	if len(vals) == 0 {
		return notes.Condition{}
	}
	cond := notes.Condition{Present: true, Versions: []int64{}}
	for raw := range strings.SplitSeq(strings.Join(vals, ","), ",") {
		tag := strings.TrimSpace(raw)
		if tag == "*" {
			cond.Any = true
			continue
		}
		if v, ok := parseStrongTag(tag); ok {
			cond.Versions = append(cond.Versions, v)
		}
	}
	return cond
}

func parseStrongTag(tag string) (int64, bool) {
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return 0, false
	}
	v, err := strconv.ParseInt(tag[1:len(tag)-1], 10, 64)
	if err != nil || v < 1 {
		return 0, false
	}
	return v, true
}

// listNotes answers a JSON array. Without limit it holds every note of the
// account; with limit or offset it is described by X-Total-Count and Link.
// Notes come from the store in batches read with no connection held while
// they are written, so a client that reads slowly only holds its own
// request, and that only until the request's deadline. An unbounded
// listing needs a slot of the listing limiter first: 429 when the account
// has too many in progress, 503 when the process has.
func (s *Server) listNotes(c *gin.Context) {
	ctx := c.Request.Context()
	account := accountOf(c)
	lq, page, err := listQuery(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A blocked write ignores the request's context: without a deadline a
	// client that stops reading would keep the handler, its memory and its
	// listing slot until the server's write timeout. net/http clears the
	// deadline once the response is finished.
	if dl, ok := ctx.Deadline(); ok {
		_ = http.NewResponseController(c.Writer).SetWriteDeadline(dl)
	}
	q := c.Request.URL.Query()
	var total, links string
	var count int64
	if q.Has("limit") || q.Has("offset") {
		n, err := s.notes.Count(ctx, account, lq)
		if err != nil {
			s.fail(c, err)
			return
		}
		count = n
		total, links = strconv.FormatInt(n, 10), pagination.Links(c.Request.URL, page, n)
	}
	if page.Bounded() && page.Offset == 0 && lq.Sort != notes.SortRelevance && lq.Sort.Stable() {
		s.listNotesByCursor(c, lq, page, total, count)
		return
	}
	out := bufio.NewWriterSize(c.Writer, 32<<10)
	// One encoder for the whole listing.
	enc := newNoteEncoder()
	started := false
	// The paging headers go out with the array only, never on a refusal.
	start := func() {
		if total != "" {
			c.Header("X-Total-Count", total)
		}
		if links != "" {
			c.Writer.Header().Add("Link", links)
		}
		c.Header("Content-Type", "application/json")
		c.Status(http.StatusOK)
		_ = out.WriteByte('[')
		started = true
	}
	err = s.notes.List(ctx, account, lq, func(n notes.Note) error {
		if started {
			_ = out.WriteByte(',')
		} else {
			start()
		}
		_, err := out.Write(enc.encode(n))
		return err
	})
	if err != nil {
		if !started {
			if errors.Is(err, notes.ErrTooManyListings) {
				c.Header("Retry-After", "1")
			}
			s.fail(c, err)
			return
		}
		// The status is out: all that is left is to cut the response short
		// so the client sees a broken array, never a complete-looking one.
		s.log.Warn("list stream aborted", "request_id", httpedge.RequestIDOf(c), "error", err.Error())
		_ = out.Flush()
		panic(http.ErrAbortHandler)
	}
	if !started {
		start()
	}
	_ = out.WriteByte(']')
	_ = out.Flush()
}

// listNotesByCursor answers a page in a created_at order: its next link
// continues after the page's last note (starting_after), which no insert,
// edit or deletion can shift, so a walk that follows it never repeats or
// skips a note that exists throughout. The page (at most MaxListLimit
// notes) is read before it is sent, since the link names its last note;
// one note more is read to tell whether a next page exists.
func (s *Server) listNotesByCursor(c *gin.Context, lq notes.ListQuery, page pagination.Page, total string, count int64) {
	lq.Limit = page.Limit + 1
	enc := newNoteEncoder()
	var body []byte
	var last *notes.Note
	n := 0
	err := s.notes.List(c.Request.Context(), accountOf(c), lq, func(nt notes.Note) error {
		if n++; n > page.Limit {
			return nil
		}
		if n > 1 {
			body = append(body, ',')
		}
		body = append(body, enc.encode(nt)...)
		last = &nt
		return nil
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	links := []string{}
	if total != "" {
		c.Header("X-Total-Count", total)
		first := pagination.Links(c.Request.URL, pagination.Page{Limit: page.Limit}, count)
		for _, l := range strings.Split(first, ", ") {
			if strings.HasSuffix(l, `rel="first"`) || strings.HasSuffix(l, `rel="last"`) {
				links = append(links, withoutParam(l, "starting_after"))
			}
		}
	}
	if n > page.Limit && last != nil {
		u := *c.Request.URL
		qs := u.Query()
		qs.Del("offset")
		qs.Set("starting_after", notes.CursorOf(*last).Encode())
		u.RawQuery = qs.Encode()
		links = append(links, "<"+(&url.URL{Path: u.Path, RawQuery: u.RawQuery}).String()+`>; rel="next"`)
	}
	if len(links) > 0 {
		// Added: the deprecated alias has put its successor-version link.
		c.Writer.Header().Add("Link", strings.Join(links, ", "))
	}
	c.Header("Content-Type", "application/json")
	c.Status(http.StatusOK)
	_, _ = c.Writer.Write([]byte{'['})
	_, _ = c.Writer.Write(body)
	_, _ = c.Writer.Write([]byte{']'})
}

// withoutParam is the link l (<url>; rel=...) without the query
// parameter name.
func withoutParam(l, name string) string {
	end := strings.Index(l, ">")
	u, err := url.Parse(l[1:end])
	if err != nil {
		return l
	}
	q := u.Query()
	q.Del(name)
	u.RawQuery = q.Encode()
	return "<" + u.String() + l[end:]
}
