package notesdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Scopes a notes key can hold.
const (
	ScopeRead  = "notes:read"
	ScopeWrite = "notes:write"
)

// DefaultScopes are given to a key created without explicit scopes.
var DefaultScopes = []string{ScopeRead, ScopeWrite}

// ErrKeyNotFound reports an unknown key id.
var ErrKeyNotFound = errors.New("api key not found")

// Key describes an API key without its secret.
type Key struct {
	ID          string
	AccountID   string
	AccountName string
	Hint        string
	Scopes      []string
	CreatedAt   time.Time
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	LastUsedAt  *time.Time
}

type accountRow struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

func (accountRow) TableName() string { return "accounts" }

type keyRow struct {
	ID         string
	AccountID  string
	Hash       []byte
	Hint       string
	Scopes     textArray
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	// AccountName is no column of api_keys: ListKeys reads it from the
	// joined accounts, and nothing writes it.
	AccountName string `gorm:"->"`
}

func (keyRow) TableName() string { return "api_keys" }

// EnsureAccount returns the id of the account called name, creating it
// when it does not exist yet.
func (s *Store) EnsureAccount(ctx context.Context, name string) (string, error) {
	if name == "" || len(name) > 100 {
		return "", errors.New("ensure account: name must be 1..100 characters")
	}
	id, err := notes.NewPrefixedID("acct_")
	if err != nil {
		return "", err
	}
	db := s.db.WithContext(ctx)
	row := accountRow{ID: id, Name: name, CreatedAt: time.Now().UTC()}
	if err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).Create(&row).Error; err != nil {
		return "", fmt.Errorf("ensure account: %w", translate(err))
	}
	var got accountRow
	if err := db.Where("name = ?", name).Take(&got).Error; err != nil {
		return "", fmt.Errorf("ensure account: %w", translate(err))
	}
	return got.ID, nil
}

// CreateKey issues a new key for the account called accountName, creating
// the account if needed, and returns the key's description and its
// plaintext, which is never stored. A zero expiresAt never expires.
func (s *Store) CreateKey(ctx context.Context, accountName string, scopes []string, expiresAt time.Time) (Key, string, error) {
	accountID, err := s.EnsureAccount(ctx, accountName)
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	plain, hash, err := auth.Generate(auth.NotesPrefix)
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	id, err := notes.NewPrefixedID("key_")
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	row := keyRow{ID: id, AccountID: accountID, Hash: hash[:], Hint: auth.Hint(plain), Scopes: textArray(scopes), CreatedAt: time.Now().UTC()}
	if !expiresAt.IsZero() {
		exp := expiresAt.UTC()
		row.ExpiresAt = &exp
	}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", translate(err))
	}
	return row.key(accountName), plain, nil
}

func (r keyRow) key(accountName string) Key {
	return Key{ID: r.ID, AccountID: r.AccountID, AccountName: accountName, Hint: r.Hint, Scopes: []string(r.Scopes),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt}
}

// ListKeys lists the keys of the account called accountName, or of every
// account when accountName is empty, oldest first.
func (s *Store) ListKeys(ctx context.Context, accountName string) ([]Key, error) {
	var rows []keyRow
	q := s.db.WithContext(ctx).Table("api_keys AS k").
		Select("k.id, k.account_id, k.hint, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, a.name AS account_name").
		Joins("JOIN accounts AS a ON a.id = k.account_id").Order("k.created_at, k.id")
	if accountName != "" {
		q = q.Where("a.name = ?", accountName)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	out := make([]Key, len(rows))
	for i, r := range rows {
		out[i] = r.key(r.AccountName)
	}
	return out, nil
}

// RevokeKey revokes the key id at now. Revoking a revoked key keeps its
// first revocation time. An unknown id is ErrKeyNotFound.
func (s *Store) RevokeKey(ctx context.Context, id string, now time.Time) error {
	res := s.db.WithContext(ctx).Model(&keyRow{}).Where("id = ?", id).
		Update("revoked_at", gorm.Expr("COALESCE(revoked_at, ?)", now.UTC()))
	if res.Error != nil {
		return fmt.Errorf("revoke key: %w", translate(res.Error))
	}
	if res.RowsAffected == 0 {
		return ErrKeyNotFound
	}
	return nil
}

// LookupKey implements auth.KeyStore. Revoked and expired keys are returned
// as they are: the authenticator rejects them.
func (s *Store) LookupKey(ctx context.Context, hash auth.Hash) (auth.Principal, error) {
	var r keyRow
	err := s.db.WithContext(ctx).Select("id, account_id, scopes, expires_at, revoked_at").Where("hash = ?", hash[:]).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return auth.Principal{}, auth.ErrKeyNotFound
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("lookup key: %w", translate(err))
	}
	p := auth.Principal{AccountID: r.AccountID, KeyID: r.ID, Scopes: []string(r.Scopes), Revoked: r.RevokedAt != nil}
	if r.ExpiresAt != nil {
		p.ExpiresAt = *r.ExpiresAt
	}
	return p, nil
}

// FlushLastUsed records when keys were last used, in one statement for
// the whole batch. It fits auth.LastUsedFlusher; a time never moves
// backwards, and a key whose time does not advance is not written.
func (s *Store) FlushLastUsed(ctx context.Context, lastUsed auth.LastUsed) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids, times := lastUsed.Columns(nil)
	// api_keys.id is text (key_...), not uuid.
	_, err := s.sql.ExecContext(ctx, `UPDATE api_keys AS k SET last_used_at = v.t
		FROM unnest($1::text[], $2::timestamptz[]) AS v(id, t)
		WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`, ids, times)
	if err != nil {
		return fmt.Errorf("flush last used: %w", translate(err))
	}
	return nil
}

var _ auth.KeyStore = (*Store)(nil)
