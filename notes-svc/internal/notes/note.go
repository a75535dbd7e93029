// Package notes holds the notes domain: the Note type, the rules a note must
// satisfy, the errors the domain reports and the Service that applies them
// on top of a Store.
package notes

import (
	"errors"
	"fmt"
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

// Note is one note of an account.
type Note struct {
	ID        string
	AccountID string
	Title     string
	Content   string
	// Tags is never nil: a note without tags has an empty list.
	Tags      []string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version starts at 1 and grows by one on every change; it is the
	// source of the ETag.
	Version int64
}

// Draft is the caller-supplied part of a note for create and full update.
type Draft struct {
	Title   string
	Content string
	// Tags is nil when the caller did not send tags: create stores no tags
	// and a full update keeps the current ones.
	Tags []string
}

// Normalize validates d and returns it with the title trimmed and the tags
// normalized (trimmed, NFC, case-folded, de-duplicated in first-seen order).
func (d Draft) Normalize() (Draft, error) {
	var verr fielderr.List
	out := Draft{Content: d.Content}
	out.Title = normalizeTitle(d.Title, &verr)
	checkContent(d.Content, &verr)
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
type Patch struct {
	Title   *string
	Content *string
	// Tags replaces the tag list when non-nil; an empty list (JSON null or
	// []) removes every tag.
	Tags *[]string
}

// Apply returns n's draft with p applied, validated and normalized.
func (p Patch) Apply(n Note) (Draft, error) {
	d := Draft{Title: n.Title, Content: n.Content, Tags: n.Tags}
	if p.Title != nil {
		d.Title = *p.Title
	}
	if p.Content != nil {
		d.Content = *p.Content
	}
	if p.Tags != nil {
		d.Tags = *p.Tags
		if d.Tags == nil {
			d.Tags = []string{}
		}
	}
	return d.Normalize()
}

// Sort orders a listing.
type Sort string

// Sort orders accepted by a listing; the default is SortCreatedAsc.
const (
	SortCreatedAsc  Sort = "created_at"
	SortCreatedDesc Sort = "-created_at"
	SortUpdatedAsc  Sort = "updated_at"
	SortUpdatedDesc Sort = "-updated_at"
	SortTitle       Sort = "title"
)

// Sorts lists every accepted Sort, for validation and documentation.
var Sorts = []Sort{SortCreatedAsc, SortCreatedDesc, SortUpdatedAsc, SortUpdatedDesc, SortTitle}

// ListQuery selects and orders the notes of a listing.
type ListQuery struct {
	// Tags, when set, keeps the notes that carry every one of them.
	Tags []string
	// Search is a web-search style full-text query; empty means none.
	Search string
	Sort   Sort
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
	} else if !slices.Contains(Sorts, q.Sort) {
		verr.Add("sort", "must be one of created_at, -created_at, updated_at, -updated_at, title")
	}
	if err := verr.Err(); err != nil {
		return ListQuery{}, err
	}
	return q, nil
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
