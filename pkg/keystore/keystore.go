// Package keystore keeps a service's accounts and API keys in its own
// PostgreSQL database, through GORM, the same way for both services: one
// row model over the accounts and api_keys tables that both schemas share
// (ids are text in notes-svc and uuid in marketdata-svc: every id crosses
// as text), one set of operations for the keys commands and for an admin
// API, and the lookup and last-use flush that pkg/auth consumes.
//
// Only the SHA-256 of a key is stored; its plaintext is returned once, by
// CreateKey. What differs between the services (the key prefix, the
// scopes, the form of ids, the domain errors) is a Config.
package keystore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tickerdesk/tickerdesk/pkg/auth"
)

// Errors of the store's operations.
var (
	ErrKeyNotFound     = errors.New("api key not found")
	ErrAccountNotFound = errors.New("account not found")
	ErrAccountExists   = errors.New("account already exists")
	ErrInvalid         = errors.New("invalid key options")
	// ErrKeyLimit refuses a key that would give its account more than
	// MaxLiveKeys live keys.
	ErrKeyLimit = errors.New("too many live keys")
	// ErrKeyNotLive refuses to roll a key that is revoked or expired.
	ErrKeyNotLive = errors.New("key is revoked or expired")
)

// Limits a key may carry: far above any plan, far below what the columns
// hold, so that a typo is refused with a message rather than by the
// database.
const (
	MaxRatePerSecond = 1_000_000
	MaxMonthlyQuota  = 1_000_000_000_000
	// MaxKeyNameBytes bounds a key's name, as the api_keys tables do.
	MaxKeyNameBytes = 100
)

// Config is what a service tells the store about its keys.
type Config struct {
	// Prefix starts every key of the service (auth.NotesPrefix,
	// auth.MarketDataPrefix).
	Prefix string
	// Scopes are every scope a key may hold; DefaultScopes are those of a
	// key created without any.
	Scopes, DefaultScopes []string
	// NewAccountID and NewKeyID return the id of a new row, in the form
	// the service's ids take.
	NewAccountID, NewKeyID func() (string, error)
	// ValidID reports whether id has that form. Anything else names no
	// account or key and never reaches the database, where a uuid column
	// would refuse it with an error of its own.
	ValidID func(id string) bool
	// IDForm describes the form of key ids for messages, e.g. "a UUID".
	IDForm string
	// Translate maps a driver error to the service's domain errors
	// (timeout, unavailable), keeping it in the chain; nil keeps it as is.
	Translate func(error) error
}

// Store is the key store of one service's database. It is safe for
// concurrent use.
type Store struct {
	db *gorm.DB
	c  Config
	// actor names who acts, for the audit trail (As).
	actor string
}

// New returns the store on db, a GORM session over the service's pool
// (postgres.OpenGORM).
func New(db *gorm.DB, c Config) *Store {
	if c.Translate == nil {
		c.Translate = func(err error) error { return err }
	}
	return &Store{db: db, c: c, actor: ActorSystem}
}

// Config returns the store's configuration.
func (s *Store) Config() Config { return s.c }

// Account is an account that keys belong to.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Key describes a stored key, never its secret. Nil times mean never.
// It is also how GORM reads a key (ListKeys, GetKey, LookupKey).
type Key struct {
	ID        string
	AccountID string
	// Account is the account's name, read from the joined accounts.
	Account string `gorm:"->"`
	// Name is a label for people, empty when none was given.
	Name   string
	Hint   string
	Scopes Scopes
	// RatePerSecond and MonthlyQuota are the key's limits; zero means
	// none.
	RatePerSecond int
	MonthlyQuota  int64
	CreatedAt     time.Time
	ExpiresAt     *time.Time
	RevokedAt     *time.Time
	LastUsedAt    *time.Time
}

// KeyOptions are what a new key holds besides its account. Nil Scopes
// means the configured DefaultScopes; a zero ExpiresAt never expires; zero
// limits mean none.
type KeyOptions struct {
	Name          string
	Scopes        []string
	ExpiresAt     time.Time
	RatePerSecond int
	MonthlyQuota  int64
}

type accountRow struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

func (accountRow) TableName() string { return "accounts" }

func (r accountRow) account() Account { return Account(r) }

// keyRow is a key as CreateKey writes it, with the hash of its secret.
type keyRow struct {
	Key  `gorm:"embedded"`
	Hash []byte
}

func (keyRow) TableName() string { return "api_keys" }

// keyColumns read a key row whatever the type of the ids: as text.
const keyColumns = "k.id::text AS id, k.account_id::text AS account_id, k.name, k.hint, k.scopes, k.rate_per_second, k.monthly_quota, " +
	"k.created_at, k.expires_at, k.revoked_at, k.last_used_at"

// Scopes are a key's scopes, a text[] column. As an argument it keeps
// GORM from expanding a slice into a list of placeholders and hands the
// slice to pgx, which encodes arrays itself; it scans with pgx's own array
// parser, since database/sql hands arrays over in their text form.
type Scopes []string

// Value implements driver.Valuer.
func (l Scopes) Value() (driver.Value, error) { return []string(l), nil }

// GormDataType tells GORM the column type, which it would otherwise infer
// from what Value returns, a slice it has no type for.
func (Scopes) GormDataType() string { return "text[]" }

// Scan implements sql.Scanner.
func (l *Scopes) Scan(src any) error { return pgtype.NewMap().SQLScanner((*[]string)(l)).Scan(src) }

// CreateAccount creates the account called name; a name already taken is
// ErrAccountExists.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, error) {
	if err := auth.CheckAccountName(name); err != nil {
		return Account{}, fmt.Errorf("create account: %w: %w", ErrInvalid, err)
	}
	row, err := s.newAccount(name)
	if err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	var created bool
	err = s.tx(ctx, func(tx *gorm.DB) error {
		var err error
		created, err = s.insertAccount(tx, row)
		return err
	})
	if err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	if !created {
		return Account{}, fmt.Errorf("create account %q: %w", name, ErrAccountExists)
	}
	return row.account(), nil
}

// insertAccount inserts row unless its name is taken, and audits it when
// it does.
func (s *Store) insertAccount(tx *gorm.DB, row accountRow) (bool, error) {
	res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).Create(&row)
	if res.Error != nil {
		return false, res.Error
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	return true, s.audit(tx, AuditEntry{Action: ActionAccountCreate, AccountID: row.ID, Detail: row.Name})
}

func (s *Store) newAccount(name string) (accountRow, error) {
	id, err := s.c.NewAccountID()
	if err != nil {
		return accountRow{}, err
	}
	return accountRow{ID: id, Name: name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}, nil
}

// EnsureAccount returns the id of the account called name, creating it
// when it does not exist yet.
func (s *Store) EnsureAccount(ctx context.Context, name string) (string, error) {
	if err := auth.CheckAccountName(name); err != nil {
		return "", fmt.Errorf("ensure account: %w: %w", ErrInvalid, err)
	}
	row, err := s.newAccount(name)
	if err != nil {
		return "", fmt.Errorf("ensure account: %w", err)
	}
	if err := s.tx(ctx, func(tx *gorm.DB) error { _, err := s.insertAccount(tx, row); return err }); err != nil {
		return "", fmt.Errorf("ensure account: %w", err)
	}
	a, err := s.account(ctx, "name = ?", name)
	if err != nil {
		return "", fmt.Errorf("ensure account: %w", err)
	}
	return a.ID, nil
}

// GetAccount returns the account of id; an unknown id is
// ErrAccountNotFound.
func (s *Store) GetAccount(ctx context.Context, id string) (Account, error) {
	if !s.c.ValidID(id) {
		return Account{}, fmt.Errorf("get account: %w", ErrAccountNotFound)
	}
	a, err := s.account(ctx, "id = ?", id)
	if err != nil {
		return Account{}, fmt.Errorf("get account: %w", err)
	}
	return a, nil
}

// AccountByName returns the account called name; an unknown name is
// ErrAccountNotFound.
func (s *Store) AccountByName(ctx context.Context, name string) (Account, error) {
	a, err := s.account(ctx, "name = ?", name)
	if err != nil {
		return Account{}, fmt.Errorf("get account: %w", err)
	}
	return a, nil
}

func (s *Store) account(ctx context.Context, cond string, arg string) (Account, error) {
	var row accountRow
	err := s.db.WithContext(ctx).Select("id::text AS id, name, created_at").Where(cond, arg).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Account{}, ErrAccountNotFound
	}
	if err != nil {
		return Account{}, s.c.Translate(err)
	}
	return row.account(), nil
}

// CheckKeyOptions checks o as CreateKey does, scopes against the
// configured ones, and returns it with the default scopes filled in.
func (s *Store) CheckKeyOptions(o KeyOptions) (KeyOptions, error) {
	if o.Scopes == nil {
		o.Scopes = s.c.DefaultScopes
	}
	if len(o.Scopes) == 0 {
		return o, fmt.Errorf("%w: a key needs at least one scope", ErrInvalid)
	}
	for _, sc := range o.Scopes {
		if !slices.Contains(s.c.Scopes, sc) {
			return o, fmt.Errorf("%w: unknown scope %q (known: %s)", ErrInvalid, sc, strings.Join(s.c.Scopes, ","))
		}
	}
	if err := CheckKeyName(o.Name); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if o.RatePerSecond < 0 || o.RatePerSecond > MaxRatePerSecond {
		return o, fmt.Errorf("%w: rate per second must be between 0 (no limit) and %d, got %d", ErrInvalid, MaxRatePerSecond, o.RatePerSecond)
	}
	if o.MonthlyQuota < 0 || o.MonthlyQuota > MaxMonthlyQuota {
		return o, fmt.Errorf("%w: monthly quota must be between 0 (no limit) and %d, got %d", ErrInvalid, int64(MaxMonthlyQuota), o.MonthlyQuota)
	}
	return o, nil
}

// CheckKeyName is the rule for a key's name: empty (none), or up to
// MaxKeyNameBytes bytes of printable characters with no space at either
// end, as auth.CheckAccountName rules account names, for the same reason:
// whatever prints it must not be broken or forged by it.
func CheckKeyName(name string) error {
	if name == "" {
		return nil
	}
	if err := auth.CheckAccountName(name); err != nil {
		return errors.New("key name " + strings.TrimPrefix(err.Error(), "account name "))
	}
	return nil
}

// CreateKey issues a new key for the account called account, creating
// the account if needed, and returns the key's description and its
// plaintext, which is never stored.
func (s *Store) CreateKey(ctx context.Context, account string, o KeyOptions) (Key, string, error) {
	o, err := s.CheckKeyOptions(o)
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	accountID, err := s.EnsureAccount(ctx, account)
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	key, plain, err := s.issue(ctx, accountID, o, ActionKeyCreate, "")
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	return key, plain, nil
}

// ListKeys lists the keys of the account called account, or of every
// account when account is empty, by account name and creation time.
func (s *Store) ListKeys(ctx context.Context, account string) ([]Key, error) {
	var keys []Key
	q := s.db.WithContext(ctx).Table("api_keys AS k").Select(keyColumns + ", a.name AS account").
		Joins("JOIN accounts AS a ON a.id = k.account_id").Order("a.name, k.created_at, k.id")
	if account != "" {
		q = q.Where("a.name = ?", account)
	}
	if err := q.Scan(&keys).Error; err != nil {
		return nil, fmt.Errorf("list keys: %w", s.c.Translate(err))
	}
	return keys, nil
}

// GetKey returns the key id; an unknown id is ErrKeyNotFound.
func (s *Store) GetKey(ctx context.Context, id string) (Key, error) {
	if !s.c.ValidID(id) {
		return Key{}, fmt.Errorf("get key: %w", ErrKeyNotFound)
	}
	var rows []Key
	err := s.db.WithContext(ctx).Table("api_keys AS k").Select(keyColumns+", a.name AS account").
		Joins("JOIN accounts AS a ON a.id = k.account_id").Where("k.id = ?", id).Scan(&rows).Error
	if err != nil {
		return Key{}, fmt.Errorf("get key: %w", s.c.Translate(err))
	}
	if len(rows) == 0 {
		return Key{}, fmt.Errorf("get key: %w", ErrKeyNotFound)
	}
	return rows[0], nil
}

// RevokeKey revokes the key id at at. Revoking a revoked key keeps the
// earlier revocation time. An unknown id is ErrKeyNotFound.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	return s.setTime(ctx, "revoke key", id, "revoked_at", at)
}

// ExpireKey makes the key id expire at at, or earlier if it already
// expires earlier: rolling a key gives the old one a grace period this
// way, and it never lengthens a key's life. An unknown id is
// ErrKeyNotFound.
func (s *Store) ExpireKey(ctx context.Context, id string, at time.Time) error {
	return s.setTime(ctx, "expire key", id, "expires_at", at)
}

// setTime sets column of key id to at unless it holds an earlier time,
// and audits it as action.
func (s *Store) setTime(ctx context.Context, label, id, column string, at time.Time) error {
	if !s.c.ValidID(id) {
		return fmt.Errorf("%s: %w", label, ErrKeyNotFound)
	}
	action := ActionKeyRevoke
	if column == "expires_at" {
		action = ActionKeyExpire
	}
	err := s.tx(ctx, func(tx *gorm.DB) error {
		k, err := lockKey(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Model(&keyRow{}).Where("id = ?", id).Update(column, gorm.Expr("LEAST("+column+", ?)", at.UTC())).Error; err != nil {
			return err
		}
		return s.audit(tx, AuditEntry{Action: action, AccountID: k.AccountID, KeyID: k.ID, KeyHint: k.Hint, Detail: at.UTC().Format(time.RFC3339)})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	return nil
}

// CountExpired returns how many keys have expired by now: their
// expires_at has passed, and they were not revoked before it. The count
// only grows (an expiry is never moved later, a revocation never earlier),
// so the admin API exports it as the keys-expired figure every replica
// agrees on, counting a key once whether or not anyone used it after.
func (s *Store) CountExpired(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Table("api_keys").
		Where("expires_at <= ? AND (revoked_at IS NULL OR revoked_at > expires_at)", now.UTC()).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count expired keys: %w", s.c.Translate(err))
	}
	return n, nil
}

// LookupKey implements auth.KeyStore. Revoked and expired keys are
// returned as they are: the authenticator rejects them.
func (s *Store) LookupKey(ctx context.Context, hash auth.Hash) (auth.Principal, error) {
	var rows []Key
	err := s.db.WithContext(ctx).Table("api_keys AS k").Select(keyColumns).Where("k.hash = ?", hash[:]).Limit(1).Scan(&rows).Error
	if err != nil {
		return auth.Principal{}, fmt.Errorf("lookup key: %w", s.c.Translate(err))
	}
	if len(rows) == 0 {
		return auth.Principal{}, auth.ErrKeyNotFound
	}
	r := rows[0]
	p := auth.Principal{AccountID: r.AccountID, KeyID: r.ID, Scopes: []string(r.Scopes), Revoked: r.RevokedAt != nil,
		RatePerSecond: r.RatePerSecond, MonthlyQuota: r.MonthlyQuota}
	if r.ExpiresAt != nil {
		p.ExpiresAt = *r.ExpiresAt
	}
	return p, nil
}

// FlushLastUsed records when keys were last used, in one statement for
// the whole batch; it fits auth.LastUsedFlusher. A time never moves
// backwards, a key whose time does not advance is not written, and an id
// of another form is dropped.
func (s *Store) FlushLastUsed(ctx context.Context, lastUsed auth.LastUsed) error {
	ids, times := lastUsed.Columns(s.c.ValidID)
	if len(ids) == 0 {
		return nil
	}
	// k.id = ANY takes the type of the id column, so the primary key
	// finds the rows whether ids are text or uuid; the join pairs each
	// with its time as text.
	err := s.db.WithContext(ctx).Exec(`UPDATE api_keys AS k SET last_used_at = v.t
		FROM unnest(?::text[], ?::timestamptz[]) AS v(id, t)
		WHERE k.id = ANY(?) AND k.id::text = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
		Scopes(ids), timeList(times), Scopes(ids)).Error
	if err != nil {
		return fmt.Errorf("flush last used: %w", s.c.Translate(err))
	}
	return nil
}

// timeList is a timestamptz[] value that GORM passes whole, as Scopes.
type timeList []time.Time

// Value implements driver.Valuer.
func (l timeList) Value() (driver.Value, error) { return []time.Time(l), nil }

var _ auth.KeyStore = (*Store)(nil)
