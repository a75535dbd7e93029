package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Defaults for the verified-key cache. The TTL bounds how long a revoked
// key can still be used by a replica that verified it recently.
const (
	DefaultCacheTTL  = 30 * time.Second
	MaxCacheTTL      = 60 * time.Second
	DefaultCacheSize = 10_000
)

// NoCache as Options.CacheTTL turns the verified-key cache off: every
// request looks its key up, so a revocation bites at once.
const NoCache time.Duration = -1

// CacheTTLFromSetting maps an operator's key-cache setting
// (NOTES_KEY_CACHE_TTL, MARKETDATA_KEY_CACHE_TTL) to Options.CacheTTL. In
// the settings 0 means "no cache", as an operator reads it, while the zero
// Options value means DefaultCacheTTL; without this mapping 0 silently meant
// 30 s. The services reject negative settings and settings over
// MaxCacheTTL before they get here.
func CacheTTLFromSetting(d time.Duration) time.Duration {
	if d == 0 {
		return NoCache
	}
	return d
}

// Options configures an Authenticator.
type Options struct {
	// Prefix is the key prefix this service issues, such as NotesPrefix.
	Prefix string
	Store  KeyStore
	// CacheTTL is how long a verified key is trusted without a store
	// lookup; it is capped at MaxCacheTTL. Zero means DefaultCacheTTL;
	// NoCache (any negative value) disables the cache.
	CacheTTL  time.Duration
	CacheSize int
	// OnVerified, when set, is called for every successful verification,
	// for example to record last use without a database write per request.
	OnVerified func(Principal, time.Time)
	// Throttle, when set, blocks client addresses that present too many
	// invalid keys; the middleware then answers ErrThrottled.
	Throttle *FailureThrottle
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Authenticator verifies keys against a KeyStore through a short-lived cache.
type Authenticator struct {
	prefix     string
	store      KeyStore
	cache      *keyCache
	onVerified func(Principal, time.Time)
	throttle   *FailureThrottle
	// seen holds the keys verified valid in the last SeenTTL: a client
	// address over its failure limit still gets them looked up, since
	// other callers' failures must not lock a known key out.
	seen *keyCache
	now  func() time.Time
}

// SeenTTL is how long a key verified valid is exempt from the failure
// throttle of its client's address (it is still looked up once the key
// cache's shorter TTL ends, so a revocation is seen as usual).
const SeenTTL = time.Hour

// NewAuthenticator returns an Authenticator for o.
func NewAuthenticator(o Options) *Authenticator {
	ttl := o.CacheTTL
	switch {
	case ttl == 0:
		ttl = DefaultCacheTTL
	case ttl > MaxCacheTTL:
		ttl = MaxCacheTTL
	}
	size := o.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Authenticator{prefix: o.Prefix, store: o.Store, cache: newKeyCache(ttl, size), onVerified: o.OnVerified,
		throttle: o.Throttle, seen: newKeyCache(SeenTTL, size), now: now}
}

// Verify returns the principal of key. It returns ErrMissingKey for an empty
// key and ErrInvalidKey for a malformed, unknown, revoked or expired one; any
// other error comes from the store.
func (a *Authenticator) Verify(ctx context.Context, key string) (Principal, error) {
	return a.verify(ctx, key, "")
}

// verify is Verify for a request from client. With a throttle and a
// client, a store lookup of a key not verified recently is reserved with
// the throttle first (FailureThrottle.Reserve): a malformed key and a
// failed lookup count against the client, a key in the cache or verified
// within SeenTTL never meets the throttle.
func (a *Authenticator) verify(ctx context.Context, key, client string) (Principal, error) {
	if key == "" {
		return Principal{}, ErrMissingKey
	}
	throttled := a.throttle != nil && client != ""
	hash, err := Parse(a.prefix, key)
	if err != nil {
		if throttled {
			if err := a.throttle.Check(client); err != nil {
				return Principal{}, err
			}
			a.throttle.Fail(client)
		}
		return Principal{}, ErrInvalidKey
	}
	now := a.now()
	p, ok := a.cache.get(hash, now)
	if !ok {
		release := func(bool) {}
		if _, seen := a.seen.get(hash, now); throttled && !seen {
			if release, err = a.throttle.Reserve(client); err != nil {
				return Principal{}, err
			}
		}
		p, err = a.store.LookupKey(ctx, hash)
		release(errors.Is(err, ErrKeyNotFound) || (err == nil && !p.usable(now)))
		if errors.Is(err, ErrKeyNotFound) {
			return Principal{}, ErrInvalidKey
		}
		if err != nil {
			return Principal{}, fmt.Errorf("look up key: %w", err)
		}
		a.cache.put(hash, p, now)
	}
	if !p.usable(now) {
		return Principal{}, ErrInvalidKey
	}
	a.seen.put(hash, Principal{}, now)
	if a.onVerified != nil {
		a.onVerified(p, now)
	}
	return p, nil
}

// CredentialSource extracts a key from a request. present reports whether
// the caller tried to send one at all, so that an empty or badly formed
// credential counts as invalid rather than missing.
type CredentialSource func(r *http.Request) (key string, present bool)

// BearerHeader reads "Authorization: Bearer <key>".
func BearerHeader() CredentialSource {
	return func(r *http.Request) (string, bool) {
		h := r.Header.Get("Authorization")
		if h == "" {
			return "", false
		}
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", true
		}
		return strings.TrimSpace(token), true
	}
}

// QueryParam reads the key from the named query parameter.
func QueryParam(name string) CredentialSource {
	return func(r *http.Request) (string, bool) {
		vals, ok := r.URL.Query()[name]
		if !ok {
			return "", false
		}
		if len(vals) != 1 {
			return "", true
		}
		return vals[0], true
	}
}

// FirstOf tries each source in turn and uses the first one that is present.
func FirstOf(sources ...CredentialSource) CredentialSource {
	return func(r *http.Request) (string, bool) {
		for _, s := range sources {
			if key, ok := s(r); ok {
				return key, true
			}
		}
		return "", false
	}
}

// ErrorWriter answers a failed authentication in the service's own error
// format. err is ErrMissingKey, ErrInvalidKey, a *ThrottledError (429 with
// Retry-After) or a store error.
type ErrorWriter func(c *gin.Context, err error)

// Middleware authenticates every request with the key from src and stores
// the principal in the request context. Failures are answered by writeErr.
// With a throttle, the client address is gin's ClientIP, so it is only as
// trustworthy as the engine's trusted-proxy setting.
func (a *Authenticator) Middleware(src CredentialSource, writeErr ErrorWriter) gin.HandlerFunc {
	return func(c *gin.Context) {
		key, present := src(c.Request)
		if !present {
			writeErr(c, ErrMissingKey)
			c.Abort()
			return
		}
		client := ""
		if a.throttle != nil {
			client = c.ClientIP()
		}
		if key == "" {
			if client != "" {
				a.throttle.Fail(client)
			}
			writeErr(c, ErrInvalidKey)
			c.Abort()
			return
		}
		p, err := a.verify(c.Request.Context(), key, client)
		if err != nil {
			writeErr(c, err)
			c.Abort()
			return
		}
		c.Request = c.Request.WithContext(WithPrincipal(c.Request.Context(), p))
		c.Next()
	}
}
