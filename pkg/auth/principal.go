package auth

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Errors the authenticator reports. ErrMissingKey and ErrInvalidKey are
// distinct so that an API can tell a caller which one happened.
var (
	ErrMissingKey = errors.New("missing api key")
	ErrInvalidKey = errors.New("invalid api key")
	// ErrKeyNotFound is what a KeyStore returns for an unknown hash.
	ErrKeyNotFound = errors.New("api key not found")
)

// Principal is the verified identity behind a key.
type Principal struct {
	AccountID string
	KeyID     string
	Scopes    []string
	// ExpiresAt is the zero time for a key that never expires.
	ExpiresAt time.Time
	Revoked   bool
	// RatePerSecond and MonthlyQuota are the key's limits; zero means none.
	RatePerSecond int
	MonthlyQuota  int64
}

// HasScope reports whether the principal holds scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// usable reports whether the key may be used at now.
func (p Principal) usable(now time.Time) bool {
	return !p.Revoked && (p.ExpiresAt.IsZero() || now.Before(p.ExpiresAt))
}

// KeyStore maps a key hash to its principal. Each service implements it on
// its own database. LookupKey returns ErrKeyNotFound for an unknown hash and
// returns revoked and expired keys as they are: the authenticator decides.
type KeyStore interface {
	LookupKey(ctx context.Context, hash Hash) (Principal, error)
}

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal that the middleware put into ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
