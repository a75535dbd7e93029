package keystore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Actors that are not an admin token: the keys command, and a store no one
// named (tests, tools).
const (
	ActorCLI    = "cli"
	ActorSystem = "system"
)

// Actions the audit trail records.
const (
	ActionAccountCreate = "account.create"
	ActionKeyCreate     = "key.create"
	ActionKeyRoll       = "key.roll"
	ActionKeyRevoke     = "key.revoke"
	ActionKeyExpire     = "key.expire"
)

// MaxLiveKeys bounds the keys an account holds that are neither revoked
// nor expired. Rolling adds a key while the old one lives on, so without a
// bound a loop of rolls (or of creates) would grow an account's keys, and
// the set of secrets that open it, without end.
const MaxLiveKeys = 100

// MaxRollGrace bounds how long a rolled key keeps working: a roll is a
// rotation, not a way to keep two keys alive.
const MaxRollGrace = 30 * 24 * time.Hour

// MaxAuditPage bounds a page of the audit trail.
const MaxAuditPage = 500

// AuditEntry is one row of the audit trail: who did what to which account
// and key, never a secret (KeyHint is the key's prefix and last four
// characters, as listings show it).
type AuditEntry struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	AccountID string    `json:"account_id"`
	KeyID     string    `json:"key_id,omitempty"`
	KeyHint   string    `json:"key_hint,omitempty"`
	// Detail is what else the action needs said: an account's name, the
	// new key of a roll, the time of a revocation or expiry.
	Detail string `json:"detail,omitempty"`
}

// As returns the store acting as actor: every change it makes is audited
// under that name (an admin token's name, ActorCLI). The zero store acts
// as ActorSystem.
func (s *Store) As(actor string) *Store {
	c := *s
	c.actor = actor
	return &c
}

// tx runs fn in a transaction, so that a change and its audit row commit
// together or not at all. The store's own errors pass as they are, a
// driver's through Translate.
func (s *Store) tx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	err := s.db.WithContext(ctx).Transaction(fn)
	if err == nil || isDomain(err) {
		return err
	}
	return s.c.Translate(err)
}

func isDomain(err error) bool {
	for _, e := range []error{ErrKeyNotFound, ErrAccountNotFound, ErrAccountExists, ErrInvalid, ErrKeyLimit, ErrKeyNotLive} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// audit appends e, as the store's actor, in tx.
func (s *Store) audit(tx *gorm.DB, e AuditEntry) error {
	return tx.Exec(`INSERT INTO key_audit (at, actor, action, account_id, key_id, key_hint, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		time.Now().UTC(), s.actor, e.Action, e.AccountID, e.KeyID, e.KeyHint, e.Detail).Error
}

// Audit returns up to limit entries of the audit trail after the entry
// after (0: from the first), oldest first; the last one's ID is the next
// page's cursor.
func (s *Store) Audit(ctx context.Context, after int64, limit int) ([]AuditEntry, error) {
	limit = min(max(limit, 1), MaxAuditPage)
	var rows []AuditEntry
	err := s.db.WithContext(ctx).Table("key_audit").Select("id, at, actor, action, account_id, key_id, key_hint, detail").
		Where("id > ?", after).Order("id").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("audit: %w", s.c.Translate(err))
	}
	return rows, nil
}

// DeleteAuditBefore deletes up to batch entries older than before and
// returns how many it deleted; a retention loop calls it until that is
// under batch, so that no statement holds locks for long.
func (s *Store) DeleteAuditBefore(ctx context.Context, before time.Time, batch int) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM key_audit WHERE id IN (SELECT id FROM key_audit WHERE at < ? ORDER BY id LIMIT ?)`, before.UTC(), batch)
	if res.Error != nil {
		return 0, fmt.Errorf("delete audit: %w", s.c.Translate(res.Error))
	}
	return res.RowsAffected, nil
}

// lockKey reads key id and locks its row until tx ends.
func lockKey(tx *gorm.DB, id string) (Key, error) {
	var rows []Key
	err := tx.Table("api_keys AS k").Select(keyColumns+", a.name AS account").Joins("JOIN accounts AS a ON a.id = k.account_id").
		Where("k.id = ?", id).Clauses(clause.Locking{Strength: "UPDATE", Table: clause.Table{Name: "k"}}).Scan(&rows).Error
	if err != nil {
		return Key{}, err
	}
	if len(rows) == 0 {
		return Key{}, ErrKeyNotFound
	}
	return rows[0], nil
}

// lockAccount reads account id and locks its row until tx ends: the count
// of its live keys then stays true until the new key is in.
func lockAccount(tx *gorm.DB, id string) (accountRow, error) {
	var rows []accountRow
	err := tx.Table("accounts").Select("id::text AS id, name, created_at").Where("id = ?", id).
		Clauses(clause.Locking{Strength: "UPDATE"}).Scan(&rows).Error
	if err != nil {
		return accountRow{}, err
	}
	if len(rows) == 0 {
		return accountRow{}, ErrAccountNotFound
	}
	return rows[0], nil
}

// IssueKey issues a new key for the account id, which must exist, and
// returns the key's description and its plaintext, which is never stored.
func (s *Store) IssueKey(ctx context.Context, accountID string, o KeyOptions) (Key, string, error) {
	o, err := s.CheckKeyOptions(o)
	if err != nil {
		return Key{}, "", fmt.Errorf("issue key: %w", err)
	}
	if !s.c.ValidID(accountID) {
		return Key{}, "", fmt.Errorf("issue key: %w", ErrAccountNotFound)
	}
	key, plain, err := s.issue(ctx, accountID, o, ActionKeyCreate, "")
	if err != nil {
		return Key{}, "", fmt.Errorf("issue key: %w", err)
	}
	return key, plain, nil
}

// issue inserts a key of checked options o for accountID in a transaction
// of its own, audited as action.
func (s *Store) issue(ctx context.Context, accountID string, o KeyOptions, action, detail string) (Key, string, error) {
	var key Key
	var plain string
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var err error
		key, plain, err = s.insertKey(tx, accountID, o)
		if err != nil {
			return err
		}
		return s.audit(tx, AuditEntry{Action: action, AccountID: key.AccountID, KeyID: key.ID, KeyHint: key.Hint, Detail: detail})
	})
	return key, plain, err
}

// insertKey locks the account, checks its live keys against MaxLiveKeys
// and inserts a new key of o.
func (s *Store) insertKey(tx *gorm.DB, accountID string, o KeyOptions) (Key, string, error) {
	a, err := lockAccount(tx, accountID)
	if err != nil {
		return Key{}, "", err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var live int64
	if err := tx.Table("api_keys").Where("account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", a.ID, now).
		Count(&live).Error; err != nil {
		return Key{}, "", err
	}
	if live >= MaxLiveKeys {
		return Key{}, "", fmt.Errorf("%w: account %s has %d, the most it may hold; revoke one first", ErrKeyLimit, a.ID, live)
	}
	plain, hash, err := auth.Generate(s.c.Prefix)
	if err != nil {
		return Key{}, "", err
	}
	id, err := s.c.NewKeyID()
	if err != nil {
		return Key{}, "", err
	}
	row := keyRow{Hash: hash[:], Key: Key{ID: id, AccountID: a.ID, Account: a.Name, Name: o.Name, Hint: auth.Hint(plain),
		Scopes: Scopes(o.Scopes), RatePerSecond: o.RatePerSecond, MonthlyQuota: o.MonthlyQuota, CreatedAt: now}}
	if !o.ExpiresAt.IsZero() {
		exp := o.ExpiresAt.UTC().Truncate(time.Microsecond)
		row.ExpiresAt = &exp
	}
	if err := tx.Create(&row).Error; err != nil {
		return Key{}, "", err
	}
	return row.Key, plain, nil
}

// Rolled is the outcome of RollKey: the old key, now expiring, and its
// successor.
type Rolled struct {
	Old, New Key
}

// RollKey issues a successor of key id with the same name, scopes and
// limits, and no expiry, and makes the old key expire after grace (0: at
// once; at most MaxRollGrace), or earlier if it already expires earlier.
// A revoked or expired key is ErrKeyNotLive; the successor counts against
// MaxLiveKeys while the old key lives. It returns the successor's
// plaintext, which is never stored.
func (s *Store) RollKey(ctx context.Context, id string, grace time.Duration) (Rolled, string, error) {
	if grace < 0 || grace > MaxRollGrace {
		return Rolled{}, "", fmt.Errorf("roll key: %w: the old key's grace must be between 0 and %s, got %s", ErrInvalid, MaxRollGrace, grace)
	}
	if !s.c.ValidID(id) {
		return Rolled{}, "", fmt.Errorf("roll key: %w", ErrKeyNotFound)
	}
	var out Rolled
	var plain string
	err := s.tx(ctx, func(tx *gorm.DB) error {
		old, err := lockKey(tx, id)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		if old.RevokedAt != nil || (old.ExpiresAt != nil && !now.Before(*old.ExpiresAt)) {
			return ErrKeyNotLive
		}
		o := KeyOptions{Name: old.Name, Scopes: old.Scopes, RatePerSecond: old.RatePerSecond, MonthlyQuota: old.MonthlyQuota}
		if out.New, plain, err = s.insertKey(tx, old.AccountID, o); err != nil {
			return err
		}
		end := now.Add(grace).Truncate(time.Microsecond)
		if old.ExpiresAt == nil || end.Before(*old.ExpiresAt) {
			old.ExpiresAt = &end
		}
		if err := tx.Model(&keyRow{}).Where("id = ?", id).Update("expires_at", *old.ExpiresAt).Error; err != nil {
			return err
		}
		out.Old = old
		return s.audit(tx, AuditEntry{Action: ActionKeyRoll, AccountID: old.AccountID, KeyID: old.ID, KeyHint: old.Hint,
			Detail: fmt.Sprintf("new key %s (%s); old key expires %s", out.New.ID, out.New.Hint, old.ExpiresAt.Format(time.RFC3339))})
	})
	if err != nil {
		return Rolled{}, "", fmt.Errorf("roll key: %w", err)
	}
	return out, plain, nil
}
