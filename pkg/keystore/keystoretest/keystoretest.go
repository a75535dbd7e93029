// Package keystoretest is the test of pkg/keystore that each service runs
// against its own migrated database: the store is one, the schemas are
// two (text ids in notes-svc, uuid ids in marketdata-svc), and only a
// real PostgreSQL with each schema shows that every operation works on
// both. pkg starts no database of its own.
package keystoretest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// Run tests every operation of the store that open returns, on a fresh
// migrated database of the service. unknownID is an id of the service's
// form that names no key.
func Run(t *testing.T, open func(t *testing.T) *keystore.Store, unknownID string) {
	t.Run("accounts", func(t *testing.T) { accounts(t, open(t), unknownID) })
	t.Run("create and look up", func(t *testing.T) { createAndLookUp(t, open(t)) })
	t.Run("revoke and expire", func(t *testing.T) { revokeAndExpire(t, open(t), unknownID) })
	t.Run("last used and list", func(t *testing.T) { lastUsedAndList(t, open(t)) })
	t.Run("roll", func(t *testing.T) { roll(t, open(t), unknownID) })
	t.Run("audit", func(t *testing.T) { auditTrail(t, open(t)) })
	t.Run("live key bound", func(t *testing.T) { liveKeyBound(t, open(t)) })
}

// createKey creates a key of account with o; a test cannot go on
// without it.
func createKey(t *testing.T, s *keystore.Store, account string, o keystore.KeyOptions) (keystore.Key, string) {
	t.Helper()
	k, plain, err := s.CreateKey(context.Background(), account, o)
	if err != nil {
		t.Fatal(err)
	}
	return k, plain
}

func roll(t *testing.T, s *keystore.Store, unknownID string) {
	ctx := context.Background()
	c := s.Config()
	old, oldPlain := createKey(t, s, "alice", keystore.KeyOptions{Name: "prod", Scopes: c.Scopes[:1], RatePerSecond: 7, MonthlyQuota: 70})
	before := time.Now()
	r, plain, err := s.RollKey(ctx, old.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n := r.New
	if n.ID == old.ID || n.AccountID != old.AccountID || n.Name != "prod" || !slices.Equal(n.Scopes, c.Scopes[:1]) ||
		n.RatePerSecond != 7 || n.MonthlyQuota != 70 || n.ExpiresAt != nil || n.Hint != auth.Hint(plain) {
		t.Errorf("successor %+v of %+v", n, old)
	}
	if r.Old.ExpiresAt == nil || r.Old.ExpiresAt.Before(before.Add(time.Hour-time.Second)) || r.Old.ExpiresAt.After(time.Now().Add(time.Hour)) {
		t.Errorf("old key expires %v, want in an hour", r.Old.ExpiresAt)
	}
	a := auth.NewAuthenticator(auth.Options{Prefix: c.Prefix, Store: s, CacheTTL: -1})
	for _, k := range []string{oldPlain, plain} {
		if _, err := a.Verify(ctx, k); err != nil {
			t.Errorf("during the grace both keys work: %v", err)
		}
	}
	// A grace of 0 ends the old key at once; the roll of an expired or
	// revoked key is refused, and so is a grace out of bounds.
	r2, plain2, err := s.RollKey(ctx, n.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, plain); !errors.Is(err, auth.ErrInvalidKey) {
		t.Errorf("a key rolled with no grace: %v, want ErrInvalidKey", err)
	}
	if _, err := a.Verify(ctx, plain2); err != nil {
		t.Errorf("its successor: %v", err)
	}
	if _, _, err := s.RollKey(ctx, n.ID, time.Hour); !errors.Is(err, keystore.ErrKeyNotLive) {
		t.Errorf("roll an expired key: %v, want ErrKeyNotLive", err)
	}
	if err := s.RevokeKey(ctx, r2.New.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RollKey(ctx, r2.New.ID, time.Hour); !errors.Is(err, keystore.ErrKeyNotLive) {
		t.Errorf("roll a revoked key: %v, want ErrKeyNotLive", err)
	}
	for _, g := range []time.Duration{-time.Second, keystore.MaxRollGrace + time.Second} {
		if _, _, err := s.RollKey(ctx, old.ID, g); !errors.Is(err, keystore.ErrInvalid) {
			t.Errorf("roll with grace %s: %v, want ErrInvalid", g, err)
		}
	}
	for _, id := range []string{unknownID, "not an id\n"} {
		if _, _, err := s.RollKey(ctx, id, time.Hour); !errors.Is(err, keystore.ErrKeyNotFound) {
			t.Errorf("roll %q: %v, want ErrKeyNotFound", id, err)
		}
	}
}

func auditTrail(t *testing.T, s *keystore.Store) {
	ctx := context.Background()
	admin := s.As("billing")
	a, err := admin.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	k, plain, err := admin.IssueKey(ctx, a.ID, keystore.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := admin.RollKey(ctx, k.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.As(keystore.ActorCLI).RevokeKey(ctx, r.New.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// A refused change leaves no row.
	if _, _, err := admin.IssueKey(ctx, a.ID, keystore.KeyOptions{Scopes: []string{"bogus"}}); !errors.Is(err, keystore.ErrInvalid) {
		t.Fatalf("bad scope: %v", err)
	}
	first, err := s.Audit(ctx, 0, 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("first page = %+v, %v", first, err)
	}
	rest, err := s.Audit(ctx, first[1].ID, 100)
	if err != nil || len(rest) != 2 {
		t.Fatalf("second page = %+v, %v", rest, err)
	}
	all := append(first, rest...)
	want := []struct{ actor, action, key string }{
		{"billing", keystore.ActionAccountCreate, ""}, {"billing", keystore.ActionKeyCreate, k.ID},
		{"billing", keystore.ActionKeyRoll, k.ID}, {keystore.ActorCLI, keystore.ActionKeyRevoke, r.New.ID},
	}
	for i, w := range want {
		e := all[i]
		if e.Actor != w.actor || e.Action != w.action || e.KeyID != w.key || e.AccountID != a.ID || e.At.IsZero() {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
		if strings.Contains(e.Detail+e.KeyHint, plain[5:20]) {
			t.Errorf("entry %d holds the secret: %+v", i, e)
		}
	}
	if all[1].KeyHint != k.Hint || !strings.Contains(all[2].Detail, r.New.ID) {
		t.Errorf("create and roll entries: %+v %+v", all[1], all[2])
	}
	n, err := s.DeleteAuditBefore(ctx, time.Now().Add(time.Minute), 3)
	if err != nil || n != 3 {
		t.Errorf("delete a batch: %d %v, want 3", n, err)
	}
	if left, err := s.Audit(ctx, 0, 100); err != nil || len(left) != 1 || left[0].ID != all[3].ID {
		t.Errorf("left after the batch: %+v %v", left, err)
	}
}

func liveKeyBound(t *testing.T, s *keystore.Store) {
	ctx := context.Background()
	k, _ := createKey(t, s, "looper", keystore.KeyOptions{})
	// Rolls with a grace leave the old key alive: the bound stops them,
	// and refuses a new key too, until keys die.
	id := k.ID
	var refused error
	for i := 0; i < keystore.MaxLiveKeys+5 && refused == nil; i++ {
		var r keystore.Rolled
		r, _, refused = s.RollKey(ctx, id, time.Hour)
		id = r.New.ID
		if refused == nil && i+2 > keystore.MaxLiveKeys {
			t.Fatalf("roll %d gave the account %d live keys", i+1, i+2)
		}
	}
	if !errors.Is(refused, keystore.ErrKeyLimit) {
		t.Fatalf("rolls ended with %v, want ErrKeyLimit", refused)
	}
	if _, _, err := s.CreateKey(ctx, "looper", keystore.KeyOptions{}); !errors.Is(err, keystore.ErrKeyLimit) {
		t.Errorf("create over the bound: %v, want ErrKeyLimit", err)
	}
	if err := s.RevokeKey(ctx, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateKey(ctx, "looper", keystore.KeyOptions{}); err != nil {
		t.Errorf("create after a revocation: %v", err)
	}
}

func accounts(t *testing.T, s *keystore.Store, unknownID string) {
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, "Acme Corp.")
	if err != nil || a.ID == "" || a.Name != "Acme Corp." || a.CreatedAt.IsZero() {
		t.Fatalf("create account: %+v %v", a, err)
	}
	if _, err := s.CreateAccount(ctx, "Acme Corp."); !errors.Is(err, keystore.ErrAccountExists) {
		t.Errorf("create a taken name: %v, want ErrAccountExists", err)
	}
	for _, bad := range []string{"", " acme", "a\nb", strings.Repeat("a", 101)} {
		if _, err := s.CreateAccount(ctx, bad); !errors.Is(err, keystore.ErrInvalid) {
			t.Errorf("create account %q: %v, want ErrInvalid", bad, err)
		}
	}
	if id, err := s.EnsureAccount(ctx, "Acme Corp."); err != nil || id != a.ID {
		t.Errorf("ensure an existing account: %q %v, want %q", id, err, a.ID)
	}
	same := func(b keystore.Account) bool {
		return b.ID == a.ID && b.Name == a.Name && b.CreatedAt.Equal(a.CreatedAt)
	}
	if got, err := s.GetAccount(ctx, a.ID); err != nil || !same(got) {
		t.Errorf("get account: %+v %v, want %+v", got, err, a)
	}
	if got, err := s.AccountByName(ctx, "Acme Corp."); err != nil || !same(got) {
		t.Errorf("account by name: %+v %v, want %+v", got, err, a)
	}
	for _, id := range []string{unknownID, "not an id\n"} {
		if _, err := s.GetAccount(ctx, id); !errors.Is(err, keystore.ErrAccountNotFound) {
			t.Errorf("get account %q: %v, want ErrAccountNotFound", id, err)
		}
	}
	if _, err := s.AccountByName(ctx, "nobody"); !errors.Is(err, keystore.ErrAccountNotFound) {
		t.Errorf("unknown account name: %v", err)
	}
}

func createAndLookUp(t *testing.T, s *keystore.Store) {
	ctx := context.Background()
	c := s.Config()
	k1, plain1 := createKey(t, s, "alice", keystore.KeyOptions{Name: "ci deploys", RatePerSecond: 5, MonthlyQuota: 1000})
	h1, err := auth.Parse(c.Prefix, plain1)
	if err != nil {
		t.Fatalf("created key does not parse: %v", err)
	}
	if !c.ValidID(k1.ID) || !c.ValidID(k1.AccountID) || k1.Account != "alice" || k1.Name != "ci deploys" ||
		k1.Hint != auth.Hint(plain1) || !slices.Equal(k1.Scopes, c.DefaultScopes) || k1.ExpiresAt != nil || k1.CreatedAt.IsZero() {
		t.Errorf("created key %+v", k1)
	}
	p, err := s.LookupKey(ctx, h1)
	if err != nil || p.AccountID != k1.AccountID || p.KeyID != k1.ID || !slices.Equal(p.Scopes, c.DefaultScopes) ||
		p.RatePerSecond != 5 || p.MonthlyQuota != 1000 || p.Revoked || !p.ExpiresAt.IsZero() {
		t.Errorf("lookup = %+v, %v; created %+v", p, err, k1)
	}
	exp := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	k2, plain2, err := s.CreateKey(ctx, "alice", keystore.KeyOptions{Scopes: c.Scopes[:1], ExpiresAt: exp})
	if err != nil || k2.AccountID != k1.AccountID || k2.ID == k1.ID || k2.ExpiresAt == nil || !k2.ExpiresAt.Equal(exp) {
		t.Fatalf("second key of the account: %+v %v", k2, err)
	}
	if p, err := s.LookupKey(ctx, auth.HashKey(plain2)); err != nil || !p.ExpiresAt.Equal(exp) || !slices.Equal(p.Scopes, c.Scopes[:1]) || p.RatePerSecond != 0 {
		t.Errorf("lookup of the second key = %+v, %v", p, err)
	}
	if _, err := s.LookupKey(ctx, auth.HashKey(c.Prefix+"unknown")); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Errorf("lookup unknown: %v, want auth.ErrKeyNotFound", err)
	}
	for _, o := range []keystore.KeyOptions{
		{Scopes: []string{"bogus"}}, {Scopes: []string{}}, {Name: "a\x1b[2Jb"}, {Name: strings.Repeat("n", 101)},
		{RatePerSecond: -1}, {RatePerSecond: keystore.MaxRatePerSecond + 1}, {MonthlyQuota: -1}, {MonthlyQuota: keystore.MaxMonthlyQuota + 1},
	} {
		if _, _, err := s.CreateKey(ctx, "alice", o); !errors.Is(err, keystore.ErrInvalid) {
			t.Errorf("create key %+v: %v, want ErrInvalid", o, err)
		}
	}
	if _, _, err := s.CreateKey(ctx, "bad\nname", keystore.KeyOptions{}); !errors.Is(err, keystore.ErrInvalid) {
		t.Errorf("create key for a bad account name: %v, want ErrInvalid", err)
	}
}

func revokeAndExpire(t *testing.T, s *keystore.Store, unknownID string) {
	ctx := context.Background()
	c := s.Config()
	// The database may hold other tests' keys: CountExpired is checked
	// against what it said at the same instants before this test's keys.
	now, later := time.Now(), time.Now().Add(2*time.Hour)
	base := map[time.Time]int64{}
	for _, at := range []time.Time{now, later} {
		n, err := s.CountExpired(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		base[at] = n
	}
	expiredCount := func(at time.Time, more int64) {
		t.Helper()
		if n, err := s.CountExpired(ctx, at); err != nil || n != base[at]+more {
			t.Errorf("CountExpired(%s): %d %v, want %d", at.Format(time.RFC3339), n, err, base[at]+more)
		}
	}
	k, plain := createKey(t, s, "alice", keystore.KeyOptions{})
	_, expired := createKey(t, s, "alice", keystore.KeyOptions{ExpiresAt: time.Now().Add(-time.Minute)})
	a := auth.NewAuthenticator(auth.Options{Prefix: c.Prefix, Store: s, CacheTTL: -1})
	if _, err := a.Verify(ctx, plain); err != nil {
		t.Fatalf("verify a fresh key: %v", err)
	}
	if _, err := a.Verify(ctx, expired); !errors.Is(err, auth.ErrInvalidKey) {
		t.Errorf("verify an expired key: %v, want ErrInvalidKey", err)
	}
	expiredCount(now, 1)
	// Rolling: the key gets an expiry later, which only ever shortens.
	soon := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	if err := s.ExpireKey(ctx, k.ID, soon); err != nil {
		t.Fatal(err)
	}
	if err := s.ExpireKey(ctx, k.ID, soon.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetKey(ctx, k.ID); err != nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(soon) || got.Account != "alice" {
		t.Errorf("key after expiry set: %+v %v, want expiry %s", got, err, soon)
	}
	revokedAt := time.Now().Truncate(time.Microsecond)
	if err := s.RevokeKey(ctx, k.ID, revokedAt); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, k.ID, revokedAt.Add(time.Minute)); err != nil {
		t.Fatalf("revoke again: %v", err)
	}
	if got, err := s.GetKey(ctx, k.ID); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(revokedAt) {
		t.Errorf("revoked key: %+v %v, want revoked at %s", got, err, revokedAt)
	}
	if _, err := a.Verify(ctx, plain); !errors.Is(err, auth.ErrInvalidKey) {
		t.Errorf("verify a revoked key: %v, want ErrInvalidKey", err)
	}
	// Revoked before its expiry came: revoked, never expired.
	expiredCount(later, 1)
	for _, id := range []string{unknownID, "not an id\n", ""} {
		if err := s.RevokeKey(ctx, id, time.Now()); !errors.Is(err, keystore.ErrKeyNotFound) {
			t.Errorf("revoke %q: %v, want ErrKeyNotFound", id, err)
		}
		if err := s.ExpireKey(ctx, id, time.Now()); !errors.Is(err, keystore.ErrKeyNotFound) {
			t.Errorf("expire %q: %v, want ErrKeyNotFound", id, err)
		}
		if _, err := s.GetKey(ctx, id); !errors.Is(err, keystore.ErrKeyNotFound) {
			t.Errorf("get key %q: %v, want ErrKeyNotFound", id, err)
		}
	}
}

func lastUsedAndList(t *testing.T, s *keystore.Store) {
	ctx := context.Background()
	// Created out of name order: the list is by account name, then age.
	zed, _ := createKey(t, s, "zed", keystore.KeyOptions{})
	k1, plain1 := createKey(t, s, "alice", keystore.KeyOptions{RatePerSecond: 3})
	k2, _ := createKey(t, s, "alice", keystore.KeyOptions{Name: "second"})
	used := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	// One statement flushes the batch; an id of no key (deleted
	// meanwhile) or of another form is ignored.
	if err := s.FlushLastUsed(ctx, auth.LastUsed{k1.ID: used, k2.ID: used, "not an id\n": used}); err != nil {
		t.Fatal(err)
	}
	// An older time never overwrites a newer one.
	if err := s.FlushLastUsed(ctx, auth.LastUsed{k1.ID: used.Add(-time.Hour), k2.ID: used.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListKeys(ctx, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("list every key = %+v, %v", all, err)
	}
	if ids := []string{all[0].ID, all[1].ID, all[2].ID}; !slices.Equal(ids, []string{k1.ID, k2.ID, zed.ID}) {
		t.Errorf("listed %v, want alice's two keys by age then zed's", ids)
	}
	got := all[0]
	if got.Account != "alice" || got.AccountID != k1.AccountID || got.Hint != auth.Hint(plain1) || got.RatePerSecond != 3 ||
		got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) || got.RevokedAt != nil || !got.CreatedAt.Equal(k1.CreatedAt) {
		t.Errorf("listed k1 = %+v", got)
	}
	if got := all[1]; got.Name != "second" || got.LastUsedAt == nil || !got.LastUsedAt.Equal(used.Add(time.Hour)) {
		t.Errorf("listed k2 = %+v", got)
	}
	if all[2].LastUsedAt != nil {
		t.Errorf("an unused key has a last use: %+v", all[2])
	}
	if alice, err := s.ListKeys(ctx, "alice"); err != nil || len(alice) != 2 {
		t.Errorf("list alice's keys = %d, %v", len(alice), err)
	}
	if none, err := s.ListKeys(ctx, "bob"); err != nil || len(none) != 0 {
		t.Errorf("list bob's keys = %d, %v", len(none), err)
	}
	if err := s.FlushLastUsed(ctx, nil); err != nil {
		t.Errorf("flush nothing: %v", err)
	}
}
