// Package notes holds the notes domain: the Note type, the rules a note must
// satisfy, the errors the domain reports and the Service that applies them
// on top of a Store.
package notes

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

// Limits of a note. They are part of the public contract (docs/API.md).
const (
	MaxTitleChars = 200
	MaxContentLen = 100 * 1024 // bytes of UTF-8
	MaxTags       = 32
	MaxTagChars   = 64
	// MaxQueryChars bounds the full-text search query of a listing.
	MaxQueryChars = 500
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL = 24 * time.Hour
	// MaxIdempotencyKeyLen bounds the Idempotency-Key header value.
	MaxIdempotencyKeyLen = 255
)

// Domain errors. The HTTP layer maps each to one status.
var (
	ErrNotFound = errors.New("note not found")
	// ErrPreconditionFailed reports an If-Match that names none of the
	// note's current versions.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrIdempotencyInFlight reports a request whose Idempotency-Key is
	// being processed by another, still running request.
	ErrIdempotencyInFlight = errors.New("idempotency key in use by a request in flight")
	// ErrIdempotencyMismatch reports an Idempotency-Key reused with a
	// different request.
	ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")
	// ErrUnavailable reports that the database cannot be reached.
	ErrUnavailable = errors.New("database unavailable")
	// ErrTimeout reports a database operation that ran out of time.
	ErrTimeout = errors.New("database timeout")
	// ErrConflict reports a write that lost a race it could not retry.
	ErrConflict = errors.New("conflicting concurrent write")
)

// ErrTrashed reports an edit of a note in the trash: as Notion refuses
// edits of an archived page, a trashed note must be restored first.
var ErrTrashed = errors.New("note is in the trash")

// ParamError reports a query parameter that is well formed but cannot be
// used as sent: a cursor that does not decode, or one given with an order
// it cannot follow. It is the client's mistake in using the API, not an
// invalid value of a field, so it is answered apart from validation.
type ParamError struct{ Field fielderr.Field }

func (e *ParamError) Error() string { return e.Field.Name + " " + e.Field.Message }

func paramError(name, message string) error {
	return &ParamError{Field: fielderr.Field{Name: name, Message: message}}
}

// Note is one note of an account. Its gorm tags are the one mapping of a
// note to the notes table, which notesdb reads and writes through GORM;
// they are only tags, the domain imports no SQL. A field a client may set
// is also a field of Draft and of Patch, under the same name: Apply,
// WriteTo, the idempotency fingerprint and the store's update all follow
// those fields (TestWritableFieldsAreEverywhere).
type Note struct {
	ID        string `gorm:"column:id;primaryKey"`
	AccountID string `gorm:"column:account_id"`
	Title     string `gorm:"column:title"`
	Content   string `gorm:"column:content"`
	// Tags is never nil: a note without tags has an empty list. The
	// column is a text[], which the textarray serializer of notesdb
	// encodes and decodes with pgx's array codec.
	Tags []string `gorm:"column:tags;serializer:textarray"`
	// The store writes the times the service sets, never GORM's clock.
	CreatedAt time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
	// Version starts at 1 and grows by one on every change; it is the
	// source of the ETag.
	Version int64 `gorm:"column:version"`
	// Pinned marks a note the client keeps on top (a favorite).
	Pinned bool `gorm:"column:pinned"`
	// TrashedAt is when the note went to the trash, nil when it is not
	// there. Only trash and restore set it, never a client's write, so it
	// is no field of Draft or Patch.
	TrashedAt *time.Time `gorm:"column:trashed_at"`
}

// Draft is the caller-supplied part of a note for create and full update:
// the fields of Note a client writes, under their names in Note.
type Draft struct {
	Title   string
	Content string
	// Tags is nil when the caller did not send tags: create stores no tags
	// and a full update keeps the current ones.
	Tags []string
	// Pinned is false unless sent.
	Pinned bool
}

// WriteTo sets the fields of n that d holds, but keeps n's tags when d's
// are nil.
func (d Draft) WriteTo(n *Note) {
	dst := reflect.ValueOf(n).Elem()
	src := reflect.ValueOf(d)
	for i, f := range reflect.VisibleFields(src.Type()) {
		v := src.Field(i)
		if v.Kind() == reflect.Slice && v.IsNil() {
			continue
		}
		dst.FieldByIndex(noteIndex(f.Name)).Set(v)
	}
}

// noteIndex is the index of Note's field name; a Draft or Patch field
// without one in Note fails TestWritableFieldsAreEverywhere.
func noteIndex(name string) []int {
	f, ok := reflect.TypeFor[Note]().FieldByName(name)
	if !ok {
		panic("notes: " + name + " is not a field of Note")
	}
	return f.Index
}

// Normalize validates d and returns it with the title trimmed and the tags
// normalized (trimmed, NFC, case-folded, de-duplicated in first-seen order).
func (d Draft) Normalize() (Draft, error) {
	var verr fielderr.List
	out := d
	out.Title = normalizeTitle(d.Title, &verr)
	checkContent(d.Content, &verr)
	out.Tags = nil
	if d.Tags != nil {
		out.Tags = NormalizeTags(d.Tags, "tags", &verr)
	}
	if err := verr.Err(); err != nil {
		return Draft{}, err
	}
	return out, nil
}

func normalizeTitle(title string, verr *fielderr.List) string {
	if !utf8.ValidString(title) {
		verr.Add("title", "must be valid UTF-8")
		return ""
	}
	t := strings.TrimSpace(title)
	n := utf8.RuneCountInString(t)
	switch {
	case n == 0:
		verr.Add("title", "must not be empty")
	case n > MaxTitleChars:
		verr.Add("title", fmt.Sprintf("must be at most %d characters", MaxTitleChars))
	case strings.IndexFunc(t, unicode.IsControl) >= 0:
		verr.Add("title", "must be a single line without control characters")
	}
	return t
}

func checkContent(content string, verr *fielderr.List) {
	switch {
	case len(content) > MaxContentLen:
		verr.Add("content", fmt.Sprintf("must be at most %d bytes of UTF-8", MaxContentLen))
	case !utf8.ValidString(content):
		verr.Add("content", "must be valid UTF-8")
	case strings.IndexByte(content, 0) >= 0:
		verr.Add("content", "must not contain NUL characters")
	}
}

// NormalizeTag returns the canonical form of one tag: trimmed, NFC and
// case-folded, so that "Work", " work" and "WORK" are the same tag.
func NormalizeTag(tag string) string {
	tag = strings.TrimSpace(tag)
	if isASCII(tag) {
		// ASCII is already NFC and folds to lower case.
		return strings.ToLower(tag)
	}
	// A Caser keeps state and must not be shared between goroutines.
	return norm.NFC.String(cases.Fold().String(norm.NFC.String(tag)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// NormalizeTags validates and normalizes a tag list; field names the list
// in error reports ("tags" in bodies, "tag" in queries). The result is
// never nil.
func NormalizeTags(tags []string, field string, verr *fielderr.List) []string {
	if len(tags) > MaxTags {
		verr.Add(field, fmt.Sprintf("must hold at most %d tags", MaxTags))
		return []string{}
	}
	out := make([]string, 0, len(tags))
	for i, raw := range tags {
		// The name is only made for an error report.
		name := func() string { return field + "[" + strconv.Itoa(i) + "]" }
		if !utf8.ValidString(raw) {
			verr.Add(name(), "must be valid UTF-8")
			continue
		}
		t := NormalizeTag(raw)
		n := utf8.RuneCountInString(t)
		switch {
		case n == 0:
			verr.Add(name(), "must not be empty")
			continue
		case n > MaxTagChars:
			verr.Add(name(), fmt.Sprintf("must be at most %d characters", MaxTagChars))
			continue
		case strings.IndexFunc(t, unicode.IsControl) >= 0:
			verr.Add(name(), "must not contain control characters")
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Patch is an RFC 7396 merge patch of a note: nil fields are left alone.
// Each field points to the type of the Draft field of its name.
type Patch struct {
	Title   *string
	Content *string
	// Tags replaces the tag list when non-nil; an empty list (JSON null or
	// []) removes every tag.
	Tags   *[]string
	Pinned *bool
}

// Empty reports a patch that names no field: it changes nothing, not even
// the version.
func (p Patch) Empty() bool { return p == Patch{} }

// Apply returns n's draft with p applied, validated and normalized.
func (p Patch) Apply(n Note) (Draft, error) {
	var d Draft
	dv, nv, pv := reflect.ValueOf(&d).Elem(), reflect.ValueOf(n), reflect.ValueOf(p)
	for i, f := range reflect.VisibleFields(dv.Type()) {
		dv.Field(i).Set(nv.FieldByIndex(noteIndex(f.Name)))
	}
	for i, f := range reflect.VisibleFields(pv.Type()) {
		ptr := pv.Field(i)
		if ptr.IsNil() {
			continue
		}
		v := ptr.Elem()
		if v.Kind() == reflect.Slice && v.IsNil() {
			// A list sent as null is an empty list, which a draft's nil
			// (keep) must not be mistaken for.
			v = reflect.MakeSlice(v.Type(), 0, 0)
		}
		dv.FieldByName(f.Name).Set(v)
	}
	return d.Normalize()
}

// Sort orders a listing: a comma-separated list of distinct sort keys,
// each a field of SortFields, "-" first for descending. Notes equal on
// every key are ordered by id, in the last key's direction.
type Sort string

// Single-key sorts; the default is SortCreatedAsc.
const (
	SortCreatedAsc  Sort = "created_at"
	SortCreatedDesc Sort = "-created_at"
	SortUpdatedAsc  Sort = "updated_at"
	SortUpdatedDesc Sort = "-updated_at"
	SortTitle       Sort = "title"
	SortPinnedAsc   Sort = "pinned"
	SortPinnedDesc  Sort = "-pinned"
	// SortRelevance orders the matches of a search (q) by their rank, the
	// best first, title words weighing more than content words; it is a
	// sort of its own, never a key among others.
	SortRelevance Sort = "relevance"
)

// Sorts lists every accepted single key, for validation and
// documentation.
var Sorts = []Sort{SortCreatedAsc, SortCreatedDesc, SortUpdatedAsc, SortUpdatedDesc, SortTitle, SortPinnedAsc, SortPinnedDesc}

// MaxSortKeys bounds the keys of one Sort.
const MaxSortKeys = 3

// SortKey is one key of a Sort: a column of the notes table (a gorm
// column of Note) and its direction.
type SortKey struct {
	Field string
	Desc  bool
}

// Keys splits s into its keys; s must be valid (ListQuery.Validate).
func (s Sort) Keys() []SortKey {
	var keys []SortKey
	for k := range strings.SplitSeq(string(s), ",") {
		k = strings.TrimSpace(k)
		desc := strings.HasPrefix(k, "-")
		keys = append(keys, SortKey{Field: strings.TrimPrefix(k, "-"), Desc: desc})
	}
	return keys
}

// valid reports whether s is a list of at most MaxSortKeys distinct
// accepted keys.
func (s Sort) valid() bool {
	keys := s.Keys()
	if len(keys) > MaxSortKeys {
		return false
	}
	seen := make([]string, 0, len(keys))
	for _, k := range keys {
		name := Sort(k.Field)
		if k.Desc {
			name = "-" + name
		}
		if !slices.Contains(Sorts, name) || slices.Contains(seen, k.Field) {
			return false
		}
		seen = append(seen, k.Field)
	}
	return true
}

// Stable reports whether s orders by keys no write changes, the
// only orders a cursor can walk without repeating or skipping a note
// that exists throughout: created_at (and the id that breaks its ties).
func (s Sort) Stable() bool {
	if s == SortRelevance {
		return false
	}
	for _, k := range s.Keys() {
		if k.Field != string(SortCreatedAsc) {
			return false
		}
	}
	return true
}

// ListQuery selects and orders the notes of a listing.
type ListQuery struct {
	// Tags, when set, keeps the notes that carry every one of them.
	Tags []string
	// Search is a web-search style full-text query; empty means none.
	Search string
	// Pinned, when set, keeps the notes pinned or not as it says.
	Pinned *bool
	// Trashed lists the notes in the trash, and only those; a listing
	// otherwise leaves them out.
	Trashed bool
	Sort    Sort
	// StartingAfter is the cursor paging parameter as sent: a cursor of
	// NoteCursor.Encode or a note id. Service.List resolves it into After.
	StartingAfter string
	// After, when set, starts the listing after the note it names in the
	// created_at order (cursor paging); only the created_at sorts take it.
	After *NoteCursor
	// Limit is zero for "every note"; Offset skips that many notes.
	Limit  int
	Offset int
}

// Validate checks q and normalizes its tags.
func (q ListQuery) Validate() (ListQuery, error) {
	var verr fielderr.List
	if q.Tags != nil {
		q.Tags = NormalizeTags(q.Tags, "tag", &verr)
	}
	if !utf8.ValidString(q.Search) || strings.IndexByte(q.Search, 0) >= 0 {
		verr.Add("q", "must be valid UTF-8 without NUL characters")
	} else if utf8.RuneCountInString(q.Search) > MaxQueryChars {
		verr.Add("q", fmt.Sprintf("must be at most %d characters", MaxQueryChars))
	}
	if q.Sort == "" {
		q.Sort = SortCreatedAsc
	} else if q.Sort != SortRelevance && !q.Sort.valid() {
		verr.Add("sort", fmt.Sprintf("must be one key or a comma-separated list of up to %d distinct keys of %s", MaxSortKeys, sortNames()))
	}
	if err := verr.Err(); err != nil {
		return ListQuery{}, err
	}
	switch {
	case q.Sort == SortRelevance && q.Search == "":
		return ListQuery{}, paramError("sort", "relevance needs a search: send q as well")
	case (q.After != nil || q.StartingAfter != "") && !q.Sort.Stable():
		return ListQuery{}, paramError("starting_after",
			"works only with sort=created_at or sort=-created_at, whose keys never change; page other orders with offset")
	case (q.After != nil || q.StartingAfter != "") && q.Offset > 0:
		return ListQuery{}, paramError("starting_after", "cannot be combined with offset")
	}
	return q, nil
}

// sortNames lists Sorts for an error report.
func sortNames() string {
	names := make([]string, len(Sorts))
	for i, s := range Sorts {
		names[i] = string(s)
	}
	return strings.Join(names, ", ") + " (or relevance alone, with q)"
}

// Condition is the If-Match precondition of a write. The zero value means
// "no precondition".
type Condition struct {
	// Versions are the versions the caller accepts; Any means "*".
	Versions []int64
	Any      bool
	Present  bool
}

// Matches reports whether a note at version satisfies c.
func (c Condition) Matches(version int64) bool {
	return !c.Present || c.Any || slices.Contains(c.Versions, version)
}

// expected returns the versions a store must find, or nil for any.
func (c Condition) expected() []int64 {
	if !c.Present || c.Any {
		return nil
	}
	if c.Versions == nil {
		return []int64{}
	}
	return c.Versions
}
