package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
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

// CheckCacheTTLSetting is the rule both services apply to an operator's
// key-cache setting before CacheTTLFromSetting: 0 (no cache) up to
// MaxCacheTTL, since it bounds how long a revoked key keeps working.
func CheckCacheTTLSetting(d time.Duration) error {
	if d < 0 || d > MaxCacheTTL {
		return fmt.Errorf("must be between 0 (no key cache) and %.0fs: it bounds how long a revoked key keeps working", MaxCacheTTL.Seconds())
	}
	return nil
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
	// seen holds the keys a lookup found valid in the last SeenTTL: a
	// client address over its failure limit still gets them looked up,
	// since other callers' failures must not lock a known key out.
	seen *keyCache
	now  func() time.Time

	mu       sync.Mutex
	inFlight map[Hash]*lookupCall
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
		throttle: o.Throttle, seen: newKeyCache(SeenTTL, size), now: now, inFlight: map[Hash]*lookupCall{}}
}

// Verify returns the principal of key. It returns ErrMissingKey for an empty
// key and ErrInvalidKey for a malformed, unknown, revoked or expired one; any
// other error comes from the store.
func (a *Authenticator) Verify(ctx context.Context, key string) (Principal, error) {
	return a.verify(ctx, key, nil)
}

// verify is Verify for a request from client. With a throttle and a
// client, a store lookup of a key not verified recently is reserved with
// the throttle first (FailureThrottle.Reserve): a malformed key and a
// failed lookup count against the client, a key in the cache or verified
// within SeenTTL never meets the throttle.
func (a *Authenticator) verify(ctx context.Context, key string, client func() string) (Principal, error) {
	if key == "" {
		return Principal{}, ErrMissingKey
	}
	hash, err := Parse(a.prefix, key)
	if err != nil {
		if addr := a.clientAddr(client); addr != "" {
			if err := a.throttle.Check(addr); err != nil {
				return Principal{}, err
			}
			a.throttle.Fail(addr)
		}
		return Principal{}, ErrInvalidKey
	}
	now := a.now()
	p, cached := a.cache.get(hash, now)
	if !cached {
		lctx, cancel := ctx, context.CancelFunc(func() {})
		if _, ok := a.cache.getStale(hash, now, StaleIfError); ok {
			// With an expired entry to fall back on, a lookup stuck on a
			// connection to a vanished primary is not waited out.
			lctx, cancel = context.WithTimeout(ctx, StaleLookupWait)
		}
		p, err = a.lookup(lctx, hash, a.clientAddr(client), now)
		cancel()
		if err != nil {
			stale, ok := a.staleOnError(ctx, hash, now, err)
			if !ok {
				return Principal{}, err
			}
			// Served from the expired entry: it is neither marked seen
			// again nor cached anew, so the next lookup tries the store.
			p, cached = stale, true
		}
	}
	if !p.usable(now) {
		return Principal{}, ErrInvalidKey
	}
	// A key is marked seen when a lookup finds it valid. A cached key was
	// looked up less than MaxCacheTTL ago, well inside SeenTTL, so its mark
	// stands; refreshing it on every request would put a lock and a map
	// write on the hot path of every cache hit.
	if !cached {
		a.seen.put(hash, Principal{}, now)
	}
	if a.onVerified != nil {
		a.onVerified(p, now)
	}
	return p, nil
}

// StaleIfError is how long past its cache TTL a verified key keeps
// working while its store lookup fails with a store error or takes longer
// than StaleLookupWait (the database unreachable, cut off or failing
// over): without it, a failover of a few
// seconds turns every request whose key entry just expired into a 503,
// even one the service could answer from its cache. A revocation is a
// database write, so none can happen while the store cannot be read; one
// committed just before the outage is seen at the first lookup that
// succeeds. A key the store calls unknown, revoked or expired is never
// served stale.
const StaleIfError = 2 * time.Minute

// StaleLookupWait is how long a request whose key has an entry expired
// less than StaleIfError ago waits for the store before it is served from
// that entry; the lookup goes on and refreshes the entry when it answers.
const StaleLookupWait = 500 * time.Millisecond

// staleOnError returns the expired cache entry of hash when err is a store
// error and the entry expired less than StaleIfError ago.
func (a *Authenticator) staleOnError(ctx context.Context, hash Hash, now time.Time, err error) (Principal, bool) {
	if errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrThrottled) || ctx.Err() != nil {
		return Principal{}, false
	}
	return a.cache.getStale(hash, now, StaleIfError)
}

// lookupTimeout bounds a store lookup, which runs detached from the
// requests that wait for it.
const lookupTimeout = 10 * time.Second

// lookupCall is a store lookup of one key hash that concurrent requests
// share.
type lookupCall struct {
	done chan struct{}
	p    Principal
	err  error
}

// lookup finds the principal of hash in the store. Concurrent requests with
// the same key share one lookup: a burst of requests with a key the replica
// has not cached yet costs one lookup, not one each, and, as only the
// request that starts the lookup reserves it with the failure throttle, the
// burst does not count as many lookups in flight against its address. The
// lookup runs detached from any one request with its own deadline; each
// request waits on its own context. A request that joins a lookup its
// starter could not reserve (the starter's address was throttled) starts
// one of its own, under its own address.
func (a *Authenticator) lookup(ctx context.Context, hash Hash, client string, now time.Time) (Principal, error) {
	for attempt := 0; ; attempt++ {
		a.mu.Lock()
		c, joined := a.inFlight[hash]
		if !joined {
			c = &lookupCall{done: make(chan struct{})}
			a.inFlight[hash] = c
		}
		a.mu.Unlock()
		if !joined {
			go a.runLookup(context.WithoutCancel(ctx), c, hash, client, now)
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return Principal{}, ctx.Err()
		}
		if joined && errors.Is(c.err, ErrThrottled) && attempt < 3 {
			continue
		}
		// A request that joined a lookup cost none, but it did present a
		// bad key: it counts against its address like any other.
		if joined && errors.Is(c.err, ErrInvalidKey) && a.throttle != nil && client != "" {
			a.throttle.Fail(client)
		}
		return c.p, c.err
	}
}

// runLookup performs c: the reservation with the throttle, the store
// lookup and the caching of its answer.
func (a *Authenticator) runLookup(ctx context.Context, c *lookupCall, hash Hash, client string, now time.Time) {
	defer func() {
		a.mu.Lock()
		// Forget may have replaced c with a newer lookup of the same key.
		if a.inFlight[hash] == c {
			delete(a.inFlight, hash)
		}
		a.mu.Unlock()
		close(c.done)
	}()
	release := func(bool) {}
	if _, seen := a.seen.get(hash, now); a.throttle != nil && client != "" && !seen {
		var err error
		if release, err = a.throttle.Reserve(client); err != nil {
			c.err = err
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	gen := a.cache.generation()
	p, err := a.store.LookupKey(ctx, hash)
	release(errors.Is(err, ErrKeyNotFound) || (err == nil && !p.usable(now)))
	switch {
	case errors.Is(err, ErrKeyNotFound):
		c.err = ErrInvalidKey
	case err != nil:
		c.err = fmt.Errorf("look up key: %w", err)
	default:
		a.cache.putAt(hash, p, now, gen)
		c.p = p
	}
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
// A parameter given more than once is present but empty, so it fails as an
// invalid key rather than letting either value count.
func QueryParam(name string) CredentialSource {
	return func(r *http.Request) (string, bool) {
		return queryParam(r.URL.RawQuery, name)
	}
}

// maxScannedParams bounds the queries queryParam scans itself; longer ones
// go through url.ParseQuery, whose limit on the number of parameters (a
// GODEBUG setting) then applies exactly as before.
const maxScannedParams = 256

// queryParam is url.ParseQuery(raw)[name] reduced to one value, without
// building the map of every parameter: the same pair rules (pairs split on
// '&', a pair holding ';' or a bad escape skipped, '+' a space), but only
// the wanted name's values are unescaped.
func queryParam(raw, name string) (string, bool) {
	if strings.Count(raw, "&") >= maxScannedParams {
		// Like r.URL.Query(), the error is ignored: a malformed query
		// still yields its good pairs (and one past the limit, none).
		vals, _ := url.ParseQuery(raw)
		v, present := vals[name]
		if !present {
			return "", false
		}
		if len(v) != 1 {
			return "", true
		}
		return v[0], true
	}
	var value string
	n := 0
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if !unescapedEquals(k, name) {
			continue
		}
		uv, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		value = uv
		n++
	}
	switch n {
	case 0:
		return "", false
	case 1:
		return value, true
	}
	return "", true
}

// unescapedEquals reports whether the query-escaped key k is a valid escape
// that decodes to name; keys without escapes are compared as they are.
func unescapedEquals(k, name string) bool {
	if !hasEscapes(k) {
		return k == name
	}
	uk, err := url.QueryUnescape(k)
	return err == nil && uk == name
}

// hasEscapes reports whether a raw query name or value holds a '%' escape
// or a '+' (a space): a byte loop, where strings.ContainsAny would build a
// character set on each of the calls every request makes.
func hasEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
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

// Authenticate verifies the credential a CredentialSource took from a
// request: present reports whether the caller sent one at all, so that an
// empty or badly formed credential counts as invalid (and, with a throttle,
// as a failure of the client) rather than as missing. client returns the
// caller's address for the failure throttle, or "" for none; it is called
// only when a failure or a store lookup needs the address, so a request
// with a recently verified key never works it out. It returns
// ErrMissingKey, ErrInvalidKey, a *ThrottledError or a store error.
func (a *Authenticator) Authenticate(ctx context.Context, key string, present bool, client func() string) (Principal, error) {
	if !present {
		return Principal{}, ErrMissingKey
	}
	if key == "" {
		if addr := a.clientAddr(client); addr != "" {
			a.throttle.Fail(addr)
		}
		return Principal{}, ErrInvalidKey
	}
	return a.verify(ctx, key, client)
}

// clientAddr returns the address client gives, or "" when failures are
// not throttled.
func (a *Authenticator) clientAddr(client func() string) string {
	if a.throttle == nil || client == nil {
		return ""
	}
	return client()
}

// Forget drops key id from the verified-key cache, so that its next use
// is looked up: a revocation, or an expiry a roll set, bites at once on
// this replica instead of when the cache entry ends.
//
// A lookup already in flight may have read the key before its
// revocation: its answer is not cached (keyCache.putAt), and requests
// arriving from now on do not join it but look the key up afresh.
func (a *Authenticator) Forget(keyID string) {
	a.mu.Lock()
	clear(a.inFlight)
	a.mu.Unlock()
	a.cache.dropKey(keyID)
}
