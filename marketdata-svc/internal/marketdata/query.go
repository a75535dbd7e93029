package marketdata

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds of the values a query names, as marketstack documents them.
const (
	// MaxSymbols is how many symbols one request may name.
	MaxSymbols = 100
	// MaxSymbolLen bounds one symbol; the longest real ones (with an
	// exchange suffix such as ".INDX") stay well below it.
	MaxSymbolLen = 20
)

// ParseSymbols splits a comma-separated symbols list: each symbol trimmed,
// upper-cased and checked, duplicates dropped (the first occurrence keeps
// its place, because the order of symbols orders the records of a date).
// Empty items ("A,,B", a trailing comma) are skipped.
func ParseSymbols(raw string) ([]string, error) {
	// Counting commas first bounds the work on a hostile 10,000-item list.
	if strings.Count(raw, ",") >= MaxSymbols*4 {
		return nil, fmt.Errorf("at most %d symbols", MaxSymbols)
	}
	out := make([]string, 0, min(strings.Count(raw, ",")+1, MaxSymbols))
	for item := range strings.SplitSeq(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		sym, err := NormaliseSymbol(item)
		if err != nil {
			return nil, err
		}
		dup := false
		for _, s := range out {
			if s == sym {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if len(out) == MaxSymbols {
			return nil, fmt.Errorf("at most %d symbols", MaxSymbols)
		}
		out = append(out, sym)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("at least one symbol is required")
	}
	return out, nil
}

// NormaliseSymbol upper-cases one symbol and checks its characters:
// letters, digits, '.', '-' and '^' (as in BRK-B, GSPC.INDX, ^GSPC).
func NormaliseSymbol(s string) (string, error) {
	if s == "" || len(s) > MaxSymbolLen {
		return "", fmt.Errorf("a symbol has 1 to %d characters", MaxSymbolLen)
	}
	lower := false
	for i := range len(s) {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '^':
		default:
			return "", fmt.Errorf("a symbol has only letters, digits, '.', '-' and '^'")
		}
	}
	if !lower {
		return s, nil // most clients send symbols upper-case: no copy
	}
	return strings.ToUpper(s), nil
}

// ParseMIC checks a market identifier code (letters or digits; "INDX" is
// the pseudo-exchange of indices), upper-cases it, and turns an ISO 10383
// MIC that marketstack spells differently into marketstack's code (XETR
// into XETRA).
func ParseMIC(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || len(s) > 10 {
		return "", fmt.Errorf("must be a market identifier code such as XNAS")
	}
	buf := []byte(s)
	for i, c := range buf {
		switch {
		case c >= 'a' && c <= 'z':
			buf[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return "", fmt.Errorf("must be a market identifier code such as XNAS")
		}
	}
	if code, ok := micAliases[string(buf)]; ok {
		return code, nil
	}
	return string(buf), nil
}

// dateLayouts are the accepted date forms: a calendar date, ISO 8601
// timestamps with an offset written as marketstack writes it (+0000), as
// RFC 3339 writes it (+00:00 or Z), or with no offset, and the form of
// marketstack v2's own intraday example, "2024-09-27 15:30" (and ":SS"),
// UTC as an ISO timestamp without offset is.
var dateLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
}

// ParseDate reads YYYY-MM-DD or an ISO 8601 timestamp and returns UTC
// midnight of its calendar date as written: a trading day is a date on the
// exchange's calendar, so a timestamp's own offset names the day meant.
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, fmt.Errorf("must be a date YYYY-MM-DD or an ISO 8601 timestamp")
	}
	var t time.Time
	var err error
	if len(s) == 10 {
		t, err = time.Parse(time.DateOnly, s)
	} else {
		for _, layout := range dateLayouts {
			if t, err = time.Parse(layout, s); err == nil {
				break
			}
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("must be a date YYYY-MM-DD or an ISO 8601 timestamp")
	}
	y, m, d := t.Date()
	if y < 1000 {
		return time.Time{}, fmt.Errorf("must be a date after the year 1000")
	}
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
}

// FormatDate writes a date as YYYY-MM-DD.
func FormatDate(t time.Time) string { return t.Format(time.DateOnly) }

// CanonicalKey is the normalised text of an EOD query: two requests that
// mean the same thing (case, spacing, repeated symbols, date forms) have
// the same key, and any difference in meaning changes it. Symbol order is
// kept, because it orders the records within a date.
func (q EODQuery) CanonicalKey() string {
	return string(q.AppendCanonicalKey(make([]byte, 0, 64+len(q.Symbols)*8)))
}

// appendKeyScope appends the start of a canonical key: its kind, then
// the symbols in request order and the exchange, as both query kinds
// write them.
func appendKeyScope(b []byte, kind string, symbols []string, exchange string) []byte {
	b = append(b, kind...)
	b = append(b, "|s="...)
	for i, s := range symbols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	b = append(b, "|x="...)
	return append(b, exchange...)
}

// AppendCanonicalKey appends CanonicalKey to b, for a lookup that need not
// allocate the key.
func (q EODQuery) AppendCanonicalKey(b []byte) []byte {
	b = appendKeyScope(b, "eod", q.Symbols, q.Exchange)
	b = append(b, "|f="...)
	b = appendKeyDate(b, q.DateFrom)
	b = append(b, "|t="...)
	b = appendKeyDate(b, q.DateTo)
	return appendKeyPage(b, q.Latest, q.Sort, q.Limit, q.Offset)
}

// appendKeyPage appends the end of a canonical key, which both query kinds
// share: latest, the sort order and the page.
func appendKeyPage(b []byte, latest bool, sort SortOrder, limit, offset int) []byte {
	b = append(b, "|latest="...)
	b = strconv.AppendBool(b, latest)
	b = append(b, "|sort="...)
	b = append(b, sort...)
	b = append(b, "|limit="...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, "|offset="...)
	return strconv.AppendInt(b, int64(offset), 10)
}

// CacheKey is a fixed-size digest of CanonicalKey, fit for a Redis key
// whatever the number of symbols. 128 bits of SHA-256 make a collision,
// which would serve one query's records for another, not a practical risk.
func (q EODQuery) CacheKey() string { return keyDigest(q.CanonicalKey()) }

// keyDigest is the CacheKey of both query kinds: 128 bits of the SHA-256
// of a canonical key, in hex.
func keyDigest(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:16])
}

func appendKeyDate(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return t.AppendFormat(b, time.DateOnly)
}
