package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
	"github.com/tickerdesk/tickerdesk/pkg/pagination"
)

// Media types of request bodies.
const (
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"
)

// MaxBodyBytes bounds every request body; larger bodies get 413.
const MaxBodyBytes = 1 << 20

// readBody checks the Content-Type against want and reads the body, at
// most MaxBodyBytes of it.
func readBody(w http.ResponseWriter, r *http.Request, want string) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || !strings.EqualFold(mt, want) {
		return nil, &requestError{status: http.StatusUnsupportedMediaType, field: "Content-Type",
			detail: fmt.Sprintf("Content-Type must be %s", want)}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, &requestError{status: http.StatusUnsupportedMediaType, field: "Content-Type",
			detail: "the only accepted charset is utf-8"}
	}
	tooLarge := &requestError{status: http.StatusRequestEntityTooLarge, field: "body",
		detail: fmt.Sprintf("the body must be at most %d bytes", MaxBodyBytes)}
	if r.ContentLength > MaxBodyBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case err != nil:
		return nil, &requestError{status: http.StatusBadRequest, field: "body", detail: "the body could not be read"}
	}
	return body, nil
}

// noteFields is the JSON object of a note request. Each field stays raw so
// that absent, null and wrongly typed values can be told apart and named.
type noteFields struct {
	Title   json.RawMessage `json:"title"`
	Content json.RawMessage `json:"content"`
	Tags    json.RawMessage `json:"tags"`
	Pinned  json.RawMessage `json:"pinned"`
}

// decodeObject strictly decodes body, which must be one JSON object with
// no unknown fields, into dst; noun names what it holds ("a note").
// Invalid UTF-8 and NUL characters are field validation failures (422),
// not syntax errors; an escaped \u0000 decodes to NUL, which the domain
// rejects per field.
func decodeObject(body []byte, dst any, noun string) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &requestError{status: http.StatusBadRequest, field: "body", detail: "the body is empty; send a JSON object"}
	}
	if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 {
		if field, ok := badTextField(body); ok {
			var verr fielderr.List
			verr.Add(field, "must be valid UTF-8 without NUL characters")
			return &verr
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, noun)
	}
	// null decodes into a struct as a no-op; as a merge patch it would
	// mean "replace the note with null", which a note cannot be.
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("null")) {
		var verr fielderr.List
		verr.Add("body", "must be a JSON object")
		return &verr
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &requestError{status: http.StatusBadRequest, field: "body", detail: "the body must hold a single JSON object with nothing after it"}
	}
	return nil
}

func decodeError(err error, noun string) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntaxErr):
		return &requestError{status: http.StatusBadRequest, field: "body",
			detail: fmt.Sprintf("malformed JSON at byte %d: %s", syntaxErr.Offset, syntaxErr.Error())}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &requestError{status: http.StatusBadRequest, field: "body", detail: "malformed JSON: the body ends too early"}
	case errors.As(err, &typeErr):
		var verr fielderr.List
		if typeErr.Field == "" {
			verr.Add("body", "must be a JSON object")
		} else {
			verr.Add(typeErr.Field, "has the wrong type")
		}
		return &verr
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		var verr fielderr.List
		verr.Add(name, "is not a field of "+noun)
		return &verr
	}
	return &requestError{status: http.StatusBadRequest, field: "body", detail: "malformed JSON"}
}

// badTextField finds the member of a JSON object whose value holds
// invalid UTF-8 or a NUL character. Raw NUL bytes are swapped for a byte
// that is also invalid UTF-8, so the object still scans and offsets hold.
func badTextField(body []byte) (string, bool) {
	scan := bytes.ReplaceAll(body, []byte{0}, []byte{0xff})
	var members map[string]json.RawMessage
	if err := json.Unmarshal(scan, &members); err != nil {
		return "body", true
	}
	for name, raw := range members {
		if !utf8.Valid(raw) {
			return name, true
		}
	}
	return "body", true
}

// textField decodes one string member; required reports absence.
func textField(name string, raw json.RawMessage, required bool, verr *fielderr.List) *string {
	switch {
	case raw == nil:
		if required {
			verr.Add(name, "is required")
		}
		return nil
	case string(raw) == "null":
		verr.Add(name, "must be a string, not null")
		return nil
	}
	if s, ok := plainString(raw); ok {
		return &s
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		verr.Add(name, "must be a string")
		return nil
	}
	return &s
}

// plainString decodes a JSON string without escapes, the common case,
// without a second pass of the JSON decoder. raw comes from a decoder that
// checked its syntax, and the body was checked to be valid UTF-8, so the
// bytes between the quotes are the string.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// tagsField decodes the tags member. JSON null is an empty list when
// nullMeansEmpty (merge patch) and an error otherwise.
func tagsField(raw json.RawMessage, nullMeansEmpty bool, verr *fielderr.List) *[]string {
	return stringsField("tags", raw, nullMeansEmpty, "keep the tags", verr)
}

// stringsField decodes an array of strings, never nil. JSON null is an
// empty list when nullMeansEmpty (merge patch) and an error otherwise,
// whose message says what omitting the member does.
func stringsField(name string, raw json.RawMessage, nullMeansEmpty bool, omitted string, verr *fielderr.List) *[]string {
	switch {
	case raw == nil:
		return nil
	case string(raw) == "null":
		if nullMeansEmpty {
			return &[]string{}
		}
		verr.Add(name, "must be an array of strings, not null; omit it to "+omitted)
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		verr.Add(name, "must be an array of strings")
		return nil
	}
	if list == nil {
		list = []string{}
	}
	return &list
}

// boolField decodes a boolean member. JSON null is false when
// nullMeansFalse (merge patch: null removes, and false is the default) and
// an error otherwise.
func boolField(name string, raw json.RawMessage, nullMeansFalse bool, verr *fielderr.List) *bool {
	var b bool
	switch {
	case raw == nil:
		return nil
	case string(raw) == "null":
		if nullMeansFalse {
			return &b
		}
		verr.Add(name, "must be true or false, not null; omit it for false")
		return nil
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		verr.Add(name, "must be true or false")
		return nil
	}
	return &b
}

// decodeDraft decodes a create or replace body: title and content are
// required, tags optional. The draft is not normalized yet.
func decodeDraft(body []byte) (notes.Draft, error) {
	var f noteFields
	if err := decodeObject(body, &f, "a note"); err != nil {
		return notes.Draft{}, err
	}
	var verr fielderr.List
	title := textField("title", f.Title, true, &verr)
	content := textField("content", f.Content, true, &verr)
	tags := tagsField(f.Tags, false, &verr)
	pinned := boolField("pinned", f.Pinned, false, &verr)
	if err := verr.Err(); err != nil {
		return notes.Draft{}, err
	}
	d := notes.Draft{Title: *title, Content: *content}
	if tags != nil {
		d.Tags = *tags
	}
	if pinned != nil {
		d.Pinned = *pinned
	}
	return d, nil
}

// decodePatch decodes an RFC 7396 merge patch of a note.
func decodePatch(body []byte) (notes.Patch, error) {
	var f noteFields
	if err := decodeObject(body, &f, "a note"); err != nil {
		return notes.Patch{}, err
	}
	var verr fielderr.List
	p := notes.Patch{
		Title:   textField("title", f.Title, false, &verr),
		Content: textField("content", f.Content, false, &verr),
		Tags:    tagsField(f.Tags, true, &verr),
		Pinned:  boolField("pinned", f.Pinned, true, &verr),
	}
	if err := verr.Err(); err != nil {
		return notes.Patch{}, err
	}
	return p, nil
}

// listQuery reads the listing's query parameters, reporting every bad one.
func listQuery(c *gin.Context) (notes.ListQuery, pagination.Page, error) {
	q, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		// URL.Query would silently drop the bad pair, such as "sort=x;y".
		return notes.ListQuery{}, pagination.Page{}, &requestError{status: http.StatusBadRequest, field: "query",
			detail: "the query string is malformed (bad percent-encoding or a semicolon)"}
	}
	var fields fielderr.List
	page, err := pagination.Parse(pagination.Values(q), pagination.Bounds{MaxLimit: MaxListLimit})
	var perr *fielderr.List
	if errors.As(err, &perr) {
		fields.Fields = append(fields.Fields, perr.Fields...)
	}
	single := func(name string) string {
		vals := q[name]
		if len(vals) > 1 {
			fields.Add(name, "must be given at most once")
			return ""
		}
		if len(vals) == 0 {
			return ""
		}
		return vals[0]
	}
	lq := notes.ListQuery{Tags: q["tag"], Search: strings.TrimSpace(single("q")), Sort: notes.Sort(strings.TrimSpace(single("sort"))),
		Limit: page.Limit, Offset: page.Offset, StartingAfter: single("starting_after")}
	if q.Has("starting_after") && lq.StartingAfter == "" && len(q["starting_after"]) == 1 {
		fields.Add("starting_after", "must not be empty")
	}
	switch t := single("trashed"); t {
	case "", "false":
	case "true":
		lq.Trashed = true
	default:
		fields.Add("trashed", "must be true or false")
	}
	switch p := single("pinned"); p {
	case "":
	case "true", "false":
		pinned := p == "true"
		lq.Pinned = &pinned
	default:
		fields.Add("pinned", "must be true or false")
	}
	lq, err = lq.Validate()
	var verr *fielderr.List
	if errors.As(err, &verr) {
		fields.Fields = append(fields.Fields, verr.Fields...)
	}
	if ferr := fields.Err(); ferr != nil {
		return notes.ListQuery{}, pagination.Page{}, ferr
	}
	if err != nil {
		return notes.ListQuery{}, pagination.Page{}, err // a cursor used where it cannot be
	}
	return lq, page, nil
}
