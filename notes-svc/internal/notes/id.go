package notes

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// IDPrefix starts every note id.
const IDPrefix = "note_"

// crockford is the ULID alphabet: Crockford's base32 without I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// idLen is the length of a note id: the prefix and 26 base32 characters
// holding the 128 bits of a UUIDv7.
const idLen = len(IDPrefix) + 26

// NewID returns a new note id: "note_" and a UUIDv7 written in the
// 26-character ULID encoding. UUIDv7 starts with a millisecond timestamp,
// so ids sort by creation time both as bytes and as text.
func NewID() (string, error) {
	return NewPrefixedID(IDPrefix)
}

// NewPrefixedID returns prefix and a UUIDv7 in the ULID encoding; accounts
// and keys use it with their own prefixes.
func NewPrefixedID(prefix string) (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return prefix + encodeULID(u), nil
}

func encodeULID(u uuid.UUID) string {
	var out [26]byte
	// 130 bits of output for 128 bits of input: the first character holds
	// the top 3 bits, each following one 5 bits.
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(u[i])
		lo = lo<<8 | uint64(u[i+8])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether id has the shape of a note id. A malformed id
// cannot name a note, so callers answer "not found" without a lookup.
func ValidID(id string) bool {
	if len(id) != idLen || !strings.HasPrefix(id, IDPrefix) {
		return false
	}
	body := id[len(IDPrefix):]
	if body[0] > '7' {
		return false // more than 128 bits
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(crockford, body[i]) < 0 {
			return false
		}
	}
	return true
}
