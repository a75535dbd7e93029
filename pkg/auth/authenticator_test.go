package auth

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeStore counts lookups; failOnCall makes any lookup fail the test.
type fakeStore struct {
	t          *testing.T
	mu         sync.Mutex
	keys       map[Hash]Principal
	calls      int
	err        error
	failOnCall bool
	// delay holds each lookup, outside the lock, so concurrent ones overlap.
	delay time.Duration
}

func (s *fakeStore) LookupKey(_ context.Context, h Hash) (Principal, error) {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failOnCall {
		s.t.Fatalf("store was called for hash %s", h)
	}
	s.calls++
	if s.err != nil {
		return Principal{}, s.err
	}
	p, ok := s.keys[h]
	if !ok {
		return Principal{}, ErrKeyNotFound
	}
	return p, nil
}

func newKey(t *testing.T, s *fakeStore, p Principal) string {
	t.Helper()
	key, h, err := Generate(NotesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if s.keys == nil {
		s.keys = map[Hash]Principal{}
	}
	s.keys[h] = p
	return key
}

func TestWrongChecksumNeverReachesStore(t *testing.T) {
	store := &fakeStore{t: t, failOnCall: true}
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store})
	key, _, _ := Generate(NotesPrefix)
	bad := key[:len(key)-1] + string(alphabet[(indexOf(key[len(key)-1])+1)%62])
	if _, err := a.Verify(context.Background(), bad); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Verify(bad checksum) = %v, want ErrInvalidKey", err)
	}
	if _, err := a.Verify(context.Background(), "tdm_"+key[4:]); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Verify(foreign prefix) = %v, want ErrInvalidKey", err)
	}
}

func indexOf(b byte) int {
	for i := range alphabet {
		if alphabet[i] == b {
			return i
		}
	}
	return -1
}

func TestVerifyOutcomes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &fakeStore{t: t}
	good := newKey(t, store, Principal{AccountID: "acc", KeyID: "k1"})
	revoked := newKey(t, store, Principal{AccountID: "acc", KeyID: "k2", Revoked: true})
	expired := newKey(t, store, Principal{AccountID: "acc", KeyID: "k3", ExpiresAt: now.Add(-time.Second)})
	future := newKey(t, store, Principal{AccountID: "acc", KeyID: "k4", ExpiresAt: now.Add(time.Hour)})
	unknown, _, _ := Generate(NotesPrefix)
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store, Now: func() time.Time { return now }})

	cases := []struct {
		name, key string
		want      error
	}{
		{"missing", "", ErrMissingKey},
		{"good", good, nil},
		{"revoked", revoked, ErrInvalidKey},
		{"expired", expired, ErrInvalidKey},
		{"not yet expired", future, nil},
		{"unknown", unknown, ErrInvalidKey},
	}
	for _, c := range cases {
		p, err := a.Verify(context.Background(), c.key)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && p.AccountID != "acc" {
			t.Errorf("%s: principal %+v", c.name, p)
		}
	}
}

func TestVerifyStoreErrorIsNotInvalid(t *testing.T) {
	boom := errors.New("connection refused")
	store := &fakeStore{t: t, err: boom}
	key := newKey(t, store, Principal{})
	_, err := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store}).Verify(context.Background(), key)
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Verify = %v, want the store error", err)
	}
}

// revokeAll revokes every key of the store, as an operator would between
// two requests.
func (s *fakeStore) revokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, p := range s.keys {
		p.Revoked = true
		s.keys[h] = p
	}
}

// verifyTimes verifies key n times, each of which must succeed.
func verifyTimes(t *testing.T, a *Authenticator, key string, n int) {
	t.Helper()
	for range n {
		if _, err := a.Verify(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
}

// cachingAuth is an Authenticator over a fakeStore that caches keys for a
// TTL, on a clock the test moves by setting now.
type cachingAuth struct {
	now   time.Time
	store *fakeStore
	a     *Authenticator
}

func newCachingAuth(t *testing.T, ttl time.Duration) *cachingAuth {
	c := &cachingAuth{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), store: &fakeStore{t: t}}
	c.a = NewAuthenticator(Options{Prefix: NotesPrefix, Store: c.store, CacheTTL: ttl, Now: func() time.Time { return c.now }})
	return c
}

// wantLookups fails the test unless the store was asked n times in all;
// why follows the count in the failure.
func (c *cachingAuth) wantLookups(t *testing.T, n int, why string) {
	t.Helper()
	if c.store.calls != n {
		t.Fatalf("store calls = %d, want %d%s", c.store.calls, n, why)
	}
}

func TestCacheAvoidsLookupsUntilTTL(t *testing.T) {
	c := newCachingAuth(t, 10*time.Second)
	key := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k"})
	verifyTimes(t, c.a, key, 5)
	c.wantLookups(t, 1, "")
	// Revocation is seen once the entry expires.
	c.store.revokeAll()
	c.now = c.now.Add(9 * time.Second)
	if _, err := c.a.Verify(context.Background(), key); err != nil {
		t.Fatalf("within TTL: %v", err)
	}
	c.now = c.now.Add(2 * time.Second)
	if _, err := c.a.Verify(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("after TTL: %v, want ErrInvalidKey", err)
	}
	c.wantLookups(t, 2, "")
}

func TestCacheTTLIsCapped(t *testing.T) {
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: &fakeStore{t: t}, CacheTTL: time.Hour})
	if a.cache.ttl != MaxCacheTTL {
		t.Fatalf("ttl = %v, want %v", a.cache.ttl, MaxCacheTTL)
	}
}

// TestCacheTTLSettingRange is an outside audit's finding, for both services: 0 is
// "no key cache" and up to MaxCacheTTL is accepted; a negative setting or
// one over MaxCacheTTL is refused. (Unparsable values are envconfig's.)
func TestCacheTTLSettingRange(t *testing.T) {
	for _, d := range []time.Duration{0, time.Nanosecond, time.Millisecond, MaxCacheTTL} {
		if err := CheckCacheTTLSetting(d); err != nil {
			t.Errorf("%v refused: %v", d, err)
		}
	}
	for _, d := range []time.Duration{-time.Nanosecond, -time.Second, MaxCacheTTL + time.Nanosecond, time.Hour} {
		if err := CheckCacheTTLSetting(d); err == nil {
			t.Errorf("%v accepted", d)
		}
	}
}

// TestSettingZeroMeansNoCache is an outside audit's finding: a key-cache setting of
// 0 silently meant the 30 s default, so an operator who set it to have
// revocations bite at once got the opposite. Through CacheTTLFromSetting,
// 0 means no cache: every verification looks the key up and a revoked key
// is refused on the next request.
func TestSettingZeroMeansNoCache(t *testing.T) {
	store := &fakeStore{t: t}
	key := newKey(t, store, Principal{AccountID: "acc", KeyID: "k"})
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store, CacheTTL: CacheTTLFromSetting(0)})
	verifyTimes(t, a, key, 3)
	if store.calls != 3 {
		t.Fatalf("setting 0: %d lookups for 3 verifications, want 3 (no cache)", store.calls)
	}
	store.revokeAll()
	if _, err := a.Verify(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("revoked key with setting 0: %v, want ErrInvalidKey at once", err)
	}
	if got := CacheTTLFromSetting(15 * time.Second); got != 15*time.Second {
		t.Errorf("CacheTTLFromSetting(15s) = %v", got)
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := newKeyCache(time.Minute, 3)
	now := time.Now()
	for i := range 10 {
		c.put(Hash{byte(i)}, Principal{}, now)
	}
	if n := c.len(); n > 3 {
		t.Fatalf("cache holds %d entries, bound is 3", n)
	}
	if _, ok := c.get(Hash{9}, now); !ok {
		t.Fatal("most recent entry missing")
	}
}

// serve is a service's auth middleware without a web framework (pkg/ginauth
// is the gin one): the tests drive Authenticate through it as a request
// would.
func serve(a *Authenticator, src CredentialSource, fail func(http.ResponseWriter, error), next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, present := src(r)
		client := func() string {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			return host
		}
		p, err := a.Authenticate(r.Context(), key, present, client)
		if err != nil {
			fail(w, err)
			return
		}
		next(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

func TestAuthenticate(t *testing.T) {
	store := &fakeStore{t: t}
	key := newKey(t, store, Principal{AccountID: "acc-1", KeyID: "k"})
	var used []string
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store, OnVerified: func(p Principal, _ time.Time) { used = append(used, p.KeyID) }})

	r := serve(a, FirstOf(BearerHeader(), QueryParam("access_key")), func(w http.ResponseWriter, err error) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, err.Error())
	}, func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalFrom(r.Context())
		if !ok {
			t.Error("no principal in context")
		}
		io.WriteString(w, p.AccountID)
	})

	cases := []struct {
		name, header, query string
		code                int
		body                string
	}{
		{"no credential", "", "", 401, "missing api key"},
		{"bearer", "Bearer " + key, "", 200, "acc-1"},
		{"lowercase scheme", "bearer " + key, "", 200, "acc-1"},
		{"basic scheme", "Basic " + key, "", 401, "invalid api key"},
		{"empty bearer", "Bearer ", "", 401, "invalid api key"},
		{"query", "", "access_key=" + key, 200, "acc-1"},
		{"empty query value", "", "access_key=", 401, "invalid api key"},
		{"repeated query", "", "access_key=" + key + "&access_key=" + key, 401, "invalid api key"},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodGet, "/?"+c.query, nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != c.code || w.Body.String() != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.name, w.Code, w.Body.String(), c.code, c.body)
		}
	}
	if len(used) != 3 {
		t.Errorf("OnVerified called %d times, want 3", len(used))
	}
}

// queryParamReference is what QueryParam did before it scanned the query
// itself: the whole query parsed into url.Values.
func queryParamReference(raw, name string) (string, bool) {
	vals, ok := (&url.URL{RawQuery: raw}).Query()[name]
	if !ok {
		return "", false
	}
	if len(vals) != 1 {
		return "", true
	}
	return vals[0], true
}

var queryParamCases = []string{
	"", "access_key=abc", "access_key=", "access_key", "a=1&access_key=abc&b=2", "access_key=a&access_key=b",
	"access_key=a;b=1", "a=1;access_key=x", "access%5Fkey=abc", "access%5fkey=a&access_key=b", "access_key=%zz",
	"access_key=%zz&access_key=ok", "%zz=1&access_key=x", "access+key=1", "access_key=a+b%20c", "&&access_key===",
	"access_key=x&", "&access_key=x", "ACCESS_KEY=x", " access_key=x", "access_key=x" + strings.Repeat("&a=1", 300),
	strings.Repeat("a=1&", 20000) + "access_key=x",
}

func TestQueryParamMatchesParseQuery(t *testing.T) {
	for _, raw := range queryParamCases {
		gotV, gotOK := QueryParam("access_key")(&http.Request{URL: &url.URL{RawQuery: raw}})
		wantV, wantOK := queryParamReference(raw, "access_key")
		if gotV != wantV || gotOK != wantOK {
			t.Errorf("QueryParam on %.60q = %q, %v; url.Values gives %q, %v", raw, gotV, gotOK, wantV, wantOK)
		}
	}
}

func FuzzQueryParam(f *testing.F) {
	for _, raw := range queryParamCases {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		gotV, gotOK := queryParam(raw, "access_key")
		wantV, wantOK := queryParamReference(raw, "access_key")
		if gotV != wantV || gotOK != wantOK {
			t.Fatalf("queryParam(%q) = %q, %v; url.Values gives %q, %v", raw, gotV, gotOK, wantV, wantOK)
		}
	})
}

func BenchmarkQueryParam(b *testing.B) {
	r := &http.Request{URL: &url.URL{RawQuery: "access_key=md_0123456789abcdef0123456789abcdef&symbols=GOOG,MSFT&limit=100"}}
	src := QueryParam("access_key")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := src(r); !ok {
			b.Fatal("no key")
		}
	}
}

func TestStoreOutageServesARecentlyVerifiedKey(t *testing.T) {
	c := newCachingAuth(t, 10*time.Second)
	key := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k"})
	other := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k2"})
	verifyTimes(t, c.a, key, 1)
	// The database fails over just after the entry expired.
	c.store.mu.Lock()
	c.store.err = errors.New("store unavailable: unexpected EOF")
	c.store.mu.Unlock()
	c.now = c.now.Add(11 * time.Second)
	if p, err := c.a.Verify(context.Background(), key); err != nil || p.KeyID != "k" {
		t.Fatalf("during the outage, a key verified 11 s ago: %v, %v; want it served", p, err)
	}
	if _, err := c.a.Verify(context.Background(), other); err == nil {
		t.Fatal("a key never verified was accepted while the store failed")
	}
	c.now = c.now.Add(StaleIfError)
	if _, err := c.a.Verify(context.Background(), key); err == nil {
		t.Fatal("a key verified longer than TTL + StaleIfError ago was accepted while the store failed")
	}
	// Back from the outage: a revocation is seen at the first lookup.
	c.store.mu.Lock()
	c.store.err = nil
	c.store.mu.Unlock()
	c.store.revokeAll()
	c.now = c.now.Add(-StaleIfError)
	if _, err := c.a.Verify(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("revoked key after the outage: %v, want ErrInvalidKey", err)
	}
}

// A cached key is refused once its expiry passes, whatever is left of its
// cache entry: the check is a time comparison on every hit.
func TestCacheHitPastExpiryIsRefused(t *testing.T) {
	c := newCachingAuth(t, 30*time.Second)
	key := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k", ExpiresAt: c.now.Add(2 * time.Second)})
	verifyTimes(t, c.a, key, 1)
	c.now = c.now.Add(2 * time.Second)
	if _, err := c.a.Verify(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("cached key past its expiry: %v, want ErrInvalidKey", err)
	}
	c.wantLookups(t, 1, ": the refusal comes from the cached entry")
}

// Forget makes a revocation bite at once on this replica: the next use of
// the key is looked up instead of served from the cache.
func TestForgetDropsTheKeyFromTheCache(t *testing.T) {
	c := newCachingAuth(t, 30*time.Second)
	key := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k"})
	other := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "other"})
	verifyTimes(t, c.a, key, 1)
	verifyTimes(t, c.a, other, 1)
	c.store.revokeAll()
	c.a.Forget("k")
	if _, err := c.a.Verify(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("forgotten revoked key: %v, want ErrInvalidKey", err)
	}
	if _, err := c.a.Verify(context.Background(), other); err != nil {
		t.Errorf("another key stays cached: %v", err)
	}
	c.wantLookups(t, 3, "")
}

func TestStoreStuckServesARecentlyVerifiedKeyWithoutWaiting(t *testing.T) {
	c := newCachingAuth(t, 10*time.Second)
	key := newKey(t, c.store, Principal{AccountID: "acc", KeyID: "k"})
	verifyTimes(t, c.a, key, 1)
	// A lookup hangs on a connection to a frozen primary.
	c.store.delay = 5 * time.Second
	c.now = c.now.Add(11 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	p, err := c.a.Verify(ctx, key)
	if err != nil || p.KeyID != "k" {
		t.Fatalf("stuck store, key verified 11 s ago: %v, %v; want it served", p, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("served after %s; want about StaleLookupWait (%s), well inside the request's 3 s", d, StaleLookupWait)
	}
}

// heldStore answers its first lookup with what it read, but only once
// released: a lookup that read the key just before a revocation.
type heldStore struct {
	p       Principal
	revoked atomic.Bool
	calls   atomic.Int32
	read    chan struct{}
	release chan struct{}
}

func (s *heldStore) LookupKey(context.Context, Hash) (Principal, error) {
	p := s.p
	p.Revoked = s.revoked.Load()
	if s.calls.Add(1) == 1 {
		close(s.read)
		<-s.release
	}
	return p, nil
}

func TestForgetBeatsALookupInFlight(t *testing.T) {
	key, _, err := Generate(NotesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	store := &heldStore{p: Principal{AccountID: "acc", KeyID: "k"}, read: make(chan struct{}), release: make(chan struct{})}
	a := NewAuthenticator(Options{Prefix: NotesPrefix, Store: store, CacheTTL: 30 * time.Second})
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := a.Verify(ctx, key)
		first <- err
	}()
	<-store.read // the lookup has read the key, still valid
	store.revoked.Store(true)
	a.Forget("k")
	// A request after the revocation does not join the lookup that read
	// the key before it (which would hold it until the deadline).
	late, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := a.Verify(late, key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("request after the revocation, while an older lookup is in flight: %v, want ErrInvalidKey", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("request sent before the revocation: %v, want it served", err)
	}
	// Nor does that lookup's answer enter the cache.
	if _, err := a.Verify(ctx, key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("request after the older lookup ended: %v, want ErrInvalidKey (its answer was cached)", err)
	}
	if n := store.calls.Load(); n != 2 {
		t.Errorf("store lookups = %d, want 2 (the first, and the one after the revocation, whose answer is cached)", n)
	}
}
