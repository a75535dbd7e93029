package notes

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// NoteCursor is a place in the created_at order of a listing: the
// created_at and id of the last note a page held. It carries both, so a
// walk goes on after a note deleted since, and created_at never changes,
// so a note that exists for the whole walk is neither repeated nor
// skipped, whatever is inserted, edited or deleted meanwhile.
type NoteCursor struct {
	CreatedAt time.Time
	ID        string
}

// CursorOf is the cursor just after n.
func CursorOf(n Note) NoteCursor { return NoteCursor{CreatedAt: n.CreatedAt, ID: n.ID} }

// errBadCursor reports a cursor this server did not make.
var errBadCursor = errors.New("is not a cursor this API returned")

// Encode is c as an opaque token: base64url of the microseconds (the
// database's precision) and the id.
func (c NoteCursor) Encode() string {
	// #nosec G115 -- the bits of the time, read back by DecodeNoteCursor as the same int64
	b := binary.BigEndian.AppendUint64(nil, uint64(c.CreatedAt.UnixMicro()))
	return base64.RawURLEncoding.EncodeToString(append(b, c.ID...))
}

// DecodeNoteCursor reads a token of Encode.
func DecodeNoteCursor(s string) (NoteCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) <= 8 || !ValidID(string(b[8:])) {
		return NoteCursor{}, errBadCursor
	}
	// #nosec G115 -- the bits Encode wrote from an int64, read back as one
	micros := int64(binary.BigEndian.Uint64(b[:8]))
	return NoteCursor{CreatedAt: time.UnixMicro(micros).UTC(), ID: string(b[8:])}, nil
}

// EncodeEventCursor is the opaque token of a place in an account's event
// log: after the event of seq (0: before the first).
func EncodeEventCursor(seq int64) string {
	// #nosec G115 -- a seq is a positive bigserial
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, uint64(seq)))
}

// DecodeEventCursor reads a token of EncodeEventCursor.
func DecodeEventCursor(s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 8 || binary.BigEndian.Uint64(b) > math.MaxInt64 {
		return 0, errBadCursor
	}
	// #nosec G115 -- at most math.MaxInt64, checked above
	return int64(binary.BigEndian.Uint64(b)), nil
}
