package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
)

// SyncWindow is the contiguous span of days [From, Through] whose bars a
// provider sent for a symbol and a load committed.
type SyncWindow struct {
	Symbol        string
	From, Through time.Time
}

// LastBarDates returns the date of each symbol's last stored bar; a symbol
// without bars is absent. Each is one backward step of the primary key, so
// the cost is the number of symbols, not the history stored.
func (s *Store) LastBarDates(ctx context.Context, symbols []string) (map[string]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT u.s, l.date FROM unnest($1::text[]) AS u(s)
CROSS JOIN LATERAL (SELECT date FROM eod_bars WHERE symbol = u.s ORDER BY date DESC LIMIT 1) AS l`, symbols)
	if err != nil {
		return nil, fmt.Errorf("last bar dates: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	out := make(map[string]time.Time, len(symbols))
	for rows.Next() {
		var sym string
		var d time.Time
		if err := rows.Scan(&sym, &d); err != nil {
			return nil, fmt.Errorf("last bar dates: %w", marketdatadb.Translate(err))
		}
		out[sym] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last bar dates: %w", marketdatadb.Translate(err))
	}
	return out, nil
}

// SyncProgress returns provider's committed window of each of symbols that
// has one.
func (s *Store) SyncProgress(ctx context.Context, provider string, symbols []string) (map[string]SyncWindow, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT symbol, from_date, through FROM sync_progress WHERE provider = $1 AND symbol = ANY($2::text[])`, provider, symbols)
	if err != nil {
		return nil, fmt.Errorf("sync progress: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	out := make(map[string]SyncWindow, len(symbols))
	for rows.Next() {
		var w SyncWindow
		if err := rows.Scan(&w.Symbol, &w.From, &w.Through); err != nil {
			return nil, fmt.Errorf("sync progress: %w", marketdatadb.Translate(err))
		}
		out[w.Symbol] = w
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync progress: %w", marketdatadb.Translate(err))
	}
	return out, nil
}

// SaveSyncProgress records windows as committed for provider, after the
// load that stored them committed: a window that meets or overlaps the one
// recorded extends it, another replaces it (the recorded span stays one
// without gaps).
func (s *Store) SaveSyncProgress(ctx context.Context, provider string, windows []SyncWindow) error {
	if len(windows) == 0 {
		return nil
	}
	syms := make([]string, len(windows))
	froms := make([]time.Time, len(windows))
	thrus := make([]time.Time, len(windows))
	for i, w := range windows {
		syms[i], froms[i], thrus[i] = w.Symbol, w.From, w.Through
	}
	_, err := s.db.ExecContext(ctx, `
INSERT INTO sync_progress AS p (provider, symbol, from_date, through)
SELECT $1, s, f, t FROM unnest($2::text[], $3::date[], $4::date[]) AS u(s, f, t)
ON CONFLICT (provider, symbol) DO UPDATE SET
  from_date = CASE WHEN EXCLUDED.from_date <= p.through + 1 AND EXCLUDED.through + 1 >= p.from_date
    THEN least(p.from_date, EXCLUDED.from_date) ELSE EXCLUDED.from_date END,
  through = CASE WHEN EXCLUDED.from_date <= p.through + 1 AND EXCLUDED.through + 1 >= p.from_date
    THEN greatest(p.through, EXCLUDED.through) ELSE EXCLUDED.through END,
  updated_at = now()`, provider, syms, froms, thrus)
	if err != nil {
		return fmt.Errorf("save sync progress: %w", marketdatadb.Translate(err))
	}
	return nil
}

// SyncSymbols lists the symbols with end-of-day data listed on exchange
// (a MIC), or every one when exchange is empty, in symbol order.
func (s *Store) SyncSymbols(ctx context.Context, exchange string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT symbol FROM tickers WHERE has_eod AND ($1 = '' OR exchange_mic = $1) ORDER BY symbol`, exchange)
	if err != nil {
		return nil, fmt.Errorf("sync symbols: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var sym string
		if err := rows.Scan(&sym); err != nil {
			return nil, fmt.Errorf("sync symbols: %w", marketdatadb.Translate(err))
		}
		out = append(out, sym)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync symbols: %w", marketdatadb.Translate(err))
	}
	return out, nil
}

// ExchangeTimezone returns the time zone name of the exchange mic, or ""
// when the exchange or its zone is unknown.
func (s *Store) ExchangeTimezone(ctx context.Context, mic string) (string, error) {
	var tz string
	err := s.db.QueryRowContext(ctx, `SELECT coalesce((SELECT timezone FROM exchanges WHERE mic = $1), '')`, mic).Scan(&tz)
	if err != nil {
		return "", fmt.Errorf("exchange timezone: %w", marketdatadb.Translate(err))
	}
	return tz, nil
}

// StartSyncRun records that a sync run of provider started.
func (s *Store) StartSyncRun(ctx context.Context, provider string) error {
	_, err := s.db.ExecContext(ctx, `
INSERT INTO sync_runs (provider, last_started_at) VALUES ($1, now())
ON CONFLICT (provider) DO UPDATE SET last_started_at = now(), last_ended_at = NULL,
  last_status = 'running', last_rows = 0, last_failed = 0`, provider)
	if err != nil {
		return fmt.Errorf("start sync run: %w", marketdatadb.Translate(err))
	}
	return nil
}

// EndSyncRun records the outcome of provider's run: status ("ok",
// "partial" or "failed"), the rows it stored and the symbols that failed;
// an "ok" run is the provider's last success.
func (s *Store) EndSyncRun(ctx context.Context, provider, status string, rows int64, failed int) error {
	_, err := s.db.ExecContext(ctx, `
UPDATE sync_runs SET last_ended_at = now(), last_status = $2, last_rows = $3, last_failed = $4,
  last_success_at = CASE WHEN $2 = 'ok' THEN now() ELSE last_success_at END
WHERE provider = $1`, provider, status, rows, failed)
	if err != nil {
		return fmt.Errorf("end sync run: %w", marketdatadb.Translate(err))
	}
	return nil
}

// SyncLastSuccess returns, for each provider that has run, when its last
// successful run ended: the zero time when none has succeeded yet.
func (s *Store) SyncLastSuccess(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT provider, coalesce(last_success_at, 'epoch'::timestamptz) FROM sync_runs`)
	if err != nil {
		return nil, fmt.Errorf("sync last success: %w", marketdatadb.Translate(err))
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var p string
		var t time.Time
		if err := rows.Scan(&p, &t); err != nil {
			return nil, fmt.Errorf("sync last success: %w", marketdatadb.Translate(err))
		}
		if t.Unix() == 0 {
			t = time.Time{}
		}
		out[p] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync last success: %w", marketdatadb.Translate(err))
	}
	return out, nil
}
