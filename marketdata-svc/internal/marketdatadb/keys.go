package marketdatadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/tickerdesk/tickerdesk/pkg/auth"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// textArray scans a PostgreSQL text[] into dst with pgx's own array
// decoding: database/sql hands arrays over in their text form, which only
// pgx knows how to parse (quoting, escapes, NULLs).
func textArray(dst *[]string) sql.Scanner { return pgtype.NewMap().SQLScanner(dst) }

// Scopes a market-data key can hold, one per API function.
const (
	ScopeEOD       = "eod"
	ScopeTickers   = "tickers"
	ScopeExchanges = "exchanges"
	ScopeSplits    = "splits"
	ScopeDividends = "dividends"
	// ScopeIntraday grants the intraday routes.
	ScopeIntraday = "intraday"
)

// AllScopes are the scopes of a key created without an explicit list:
// every function, intraday included (so the demo key has it). Keys stored
// before intraday existed keep the scopes they were given, without it.
var AllScopes = []string{ScopeEOD, ScopeTickers, ScopeExchanges, ScopeSplits, ScopeDividends, ScopeIntraday}

// KeyOptions are the limits and rights of a new key. Zero limits mean
// none; nil Scopes means AllScopes; a zero ExpiresAt never expires.
type KeyOptions struct {
	RatePerSecond int
	MonthlyQuota  int64
	Scopes        []string
	ExpiresAt     time.Time
}

// KeyMeta describes a stored key; the plaintext is never stored. Zero times
// mean "never".
type KeyMeta struct {
	ID            string
	AccountID     string
	Account       string
	Hint          string
	Scopes        []string
	RatePerSecond int
	MonthlyQuota  int64
	CreatedAt     time.Time
	ExpiresAt     time.Time
	RevokedAt     time.Time
	LastUsedAt    time.Time
}

// CreateKey issues a key for the named account, creating the account on
// first use. It returns the plaintext, to be shown once.
func (s *Store) CreateKey(ctx context.Context, account string, opts KeyOptions) (string, KeyMeta, error) {
	account = strings.TrimSpace(account)
	if account == "" {
		return "", KeyMeta{}, errors.New("create key: account name is required")
	}
	scopes := opts.Scopes
	if len(scopes) == 0 {
		scopes = AllScopes
	}
	for _, sc := range scopes {
		if !slices.Contains(AllScopes, sc) {
			return "", KeyMeta{}, fmt.Errorf("create key: unknown scope %q (known: %s)", sc, strings.Join(AllScopes, ","))
		}
	}
	if opts.RatePerSecond < 0 || opts.MonthlyQuota < 0 {
		return "", KeyMeta{}, errors.New("create key: limits must not be negative")
	}
	plain, hash, err := auth.Generate(auth.MarketDataPrefix)
	if err != nil {
		return "", KeyMeta{}, fmt.Errorf("create key: %w", err)
	}
	var expires *time.Time
	if !opts.ExpiresAt.IsZero() {
		expires = &opts.ExpiresAt
	}
	meta := KeyMeta{Account: account, Hint: auth.Hint(plain), Scopes: scopes,
		RatePerSecond: opts.RatePerSecond, MonthlyQuota: opts.MonthlyQuota, ExpiresAt: opts.ExpiresAt}
	// Arrays go through database/sql directly: an ORM would expand a slice
	// argument into a list of placeholders.
	err = s.db.QueryRowContext(ctx, `
WITH acct AS (
  INSERT INTO accounts (name) VALUES ($1)
  ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
  RETURNING id
)
INSERT INTO api_keys (account_id, hash, hint, scopes, rate_per_second, monthly_quota, expires_at)
SELECT id, $2, $3, $4, $5, $6, $7 FROM acct
RETURNING id::text, account_id::text, created_at`,
		account, hash[:], meta.Hint, scopes, opts.RatePerSecond, opts.MonthlyQuota, expires,
	).Scan(&meta.ID, &meta.AccountID, &meta.CreatedAt)
	if err != nil {
		return "", KeyMeta{}, fmt.Errorf("create key: %w", translate(err))
	}
	return plain, meta, nil
}

// ListKeys returns every key, by account and creation time.
func (s *Store) ListKeys(ctx context.Context) ([]KeyMeta, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT k.id::text, a.id::text, a.name, k.hint, k.scopes, k.rate_per_second, k.monthly_quota,
       k.created_at, k.expires_at, k.revoked_at, k.last_used_at
FROM api_keys k JOIN accounts a ON a.id = k.account_id
ORDER BY a.name, k.created_at, k.id`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	defer rows.Close()
	var out []KeyMeta
	for rows.Next() {
		var m KeyMeta
		var expires, revoked, used sql.NullTime
		if err := rows.Scan(&m.ID, &m.AccountID, &m.Account, &m.Hint, textArray(&m.Scopes), &m.RatePerSecond, &m.MonthlyQuota,
			&m.CreatedAt, &expires, &revoked, &used); err != nil {
			return nil, fmt.Errorf("list keys: %w", translate(err))
		}
		m.ExpiresAt, m.RevokedAt, m.LastUsedAt = expires.Time, revoked.Time, used.Time
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	return out, nil
}

// RevokeKey revokes a key by id; revoking a revoked key is a no-op. An
// unknown id returns marketdata.ErrNotFound.
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return fmt.Errorf("revoke key: %w", marketdata.ErrNotFound)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("revoke key: %w", translate(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("revoke key: %w", marketdata.ErrNotFound)
	}
	return nil
}

// TouchKeys records when keys were last used, in one statement; it fits
// auth.LastUsedFlusher. A time never moves last_used_at backwards.
func (s *Store) TouchKeys(ctx context.Context, lastUsed auth.LastUsed) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids, times := lastUsed.Columns(func(id string) bool { _, err := uuid.Parse(id); return err == nil })
	_, err := s.db.ExecContext(ctx, `
UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at)
WHERE k.id = u.id`, ids, times)
	if err != nil {
		return fmt.Errorf("touch keys: %w", translate(err))
	}
	return nil
}

// LookupKey returns the principal of a key hash, revoked and expired keys
// included; an unknown hash returns auth.ErrKeyNotFound.
func (s *Store) LookupKey(ctx context.Context, hash auth.Hash) (auth.Principal, error) {
	var p auth.Principal
	var expires, revoked sql.NullTime
	err := s.db.QueryRowContext(ctx, `
SELECT id::text, account_id::text, scopes, expires_at, revoked_at, rate_per_second, monthly_quota
FROM api_keys WHERE hash = $1`, hash[:]).Scan(&p.KeyID, &p.AccountID, textArray(&p.Scopes), &expires, &revoked, &p.RatePerSecond, &p.MonthlyQuota)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Principal{}, auth.ErrKeyNotFound
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("lookup key: %w", translate(err))
	}
	p.ExpiresAt, p.Revoked = expires.Time, revoked.Valid
	return p, nil
}
