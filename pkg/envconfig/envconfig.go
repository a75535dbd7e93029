// Package envconfig reads typed settings from environment variables for
// both services' internal/config. A Reader collects every problem instead
// of stopping at the first, so an operator sees all of a bad configuration
// in one start-up error, worded the same in both services. It also keeps
// every setting it read, as read, for the configuration's one log line:
// no list of settings to log is kept by hand, and secrets are read as
// secrets (Secret, DSN), so they are logged masked.
package envconfig

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/dsn"
)

// Reader reads variables through getenv, each name after a fixed prefix,
// and keeps the problems it meets for Err.
type Reader struct {
	getenv func(string) string
	prefix string
	errs   []error
	// logged are the settings read so far, each under its name without
	// the prefix, in lower case, with secrets masked. A pointer, so that
	// the Service a Reader returns sees the settings read after it.
	logged *[]slog.Attr
}

// New returns a Reader of the variables prefix+name through getenv; the
// prefix may be empty when callers spell out whole names.
func New(getenv func(string) string, prefix string) *Reader {
	return &Reader{getenv: getenv, prefix: prefix, logged: new([]slog.Attr)}
}

// log records the value read for name; a name read again is recorded
// once, with the last value.
func (r *Reader) log(name string, value slog.Value) {
	a := slog.Attr{Key: strings.ToLower(name), Value: value}
	for i, old := range *r.logged {
		if old.Key == a.Key {
			(*r.logged)[i] = a
			return
		}
	}
	*r.logged = append(*r.logged, a)
}

// Logged returns the settings read so far, for a log line: each under its
// name without the prefix in lower case ("cache_ttl"), durations and
// levels in their text form, secrets masked.
func (r *Reader) Logged() []slog.Attr {
	return append([]slog.Attr(nil), *r.logged...)
}

// lookup returns the variable with surrounding space trimmed.
func (r *Reader) lookup(name string) string {
	return strings.TrimSpace(r.getenv(r.prefix + name))
}

// Fail records a problem with the variable name; msg follows the variable's
// whole name, as in "NOTES_LIST_WAIT must be below ...".
func (r *Reader) Fail(name, msg string) {
	r.errs = append(r.errs, fmt.Errorf("%s%s %s", r.prefix, name, msg))
}

// Err joins every recorded problem, or returns nil when there was none.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// String returns the variable with surrounding space trimmed, or def when
// it is unset or blank.
func (r *Reader) String(name, def string) string {
	v := r.lookup(name)
	if v == "" {
		v = def
	}
	r.log(name, slog.StringValue(v))
	return v
}

// Secret returns the variable like String, without a default; it is
// logged only as set (dsn.Masked) or not ("").
func (r *Reader) Secret(name string) string {
	v := r.lookup(name)
	masked := ""
	if v != "" {
		masked = dsn.Masked
	}
	r.log(name, slog.StringValue(masked))
	return v
}

// DSN returns the variable, a connection URL, like String without a
// default; it is logged with its password masked (dsn.Mask).
func (r *Reader) DSN(name string) string {
	v := r.lookup(name)
	r.log(name, slog.StringValue(dsn.Mask(v)))
	return v
}

// DSNList is List for connection URLs, each logged as DSN logs one.
func (r *Reader) DSNList(name string) []string {
	out := splitList(r.lookup(name))
	masked := make([]string, len(out))
	for i, u := range out {
		masked[i] = dsn.Mask(u)
	}
	r.log(name, slog.AnyValue(masked))
	return out
}

// List splits the variable on commas, dropping blank entries: " a, b ,"
// is [a b], and an unset variable is nil.
func (r *Reader) List(name string) []string {
	out := splitList(r.getenv(r.prefix + name))
	r.log(name, slog.AnyValue(out))
	return out
}

func splitList(v string) []string {
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Int returns the variable as a whole number, or def when it is unset; a
// value that does not parse is a problem and yields def.
func (r *Reader) Int(name string, def int) int {
	n := def
	if v := r.lookup(name); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			r.Fail(name, "must be a whole number")
			n = def
		}
	}
	r.log(name, slog.IntValue(n))
	return n
}

// Duration returns the variable as a time.Duration, or def when it is
// unset. A negative duration is a problem: no setting of either service
// means anything by one.
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	d := def
	if v := r.lookup(name); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < 0 {
			r.Fail(name, "must be a non-negative duration such as 500ms or 5s")
			d = def
		}
	}
	r.log(name, slog.StringValue(d.String()))
	return d
}

// DurationIn returns the variable as a duration within [lo, hi], or def
// when it is unset. Every duration setting has both bounds: a value far
// outside what the setting was designed for (a poll of 1µs that spins a
// core, a timeout of 100h that never fires) is a typo, refused at start
// with the range instead of run with.
func (r *Reader) DurationIn(name string, def, lo, hi time.Duration) time.Duration {
	d := r.Duration(name, def)
	if d < lo || d > hi {
		r.Fail(name, fmt.Sprintf("must be between %s and %s (got %s)", lo, hi, d))
	}
	return d
}

// DurationOrOff is DurationIn for a setting where 0 turns the behaviour
// off (no drain, no cache, no wait): 0, or a duration within [lo, hi].
func (r *Reader) DurationOrOff(name string, def, lo, hi time.Duration) time.Duration {
	d := r.Duration(name, def)
	if d != 0 && (d < lo || d > hi) {
		r.Fail(name, fmt.Sprintf("must be 0 (off) or between %s and %s (got %s)", lo, hi, d))
	}
	return d
}

// IntIn returns the variable as a whole number within [lo, hi], or def
// when it is unset: every count has both bounds, for DurationIn's reason.
func (r *Reader) IntIn(name string, def, lo, hi int) int {
	n := r.Int(name, def)
	if n < lo || n > hi {
		r.Fail(name, fmt.Sprintf("must be between %d and %d (got %d)", lo, hi, n))
	}
	return n
}

// Positive records a problem when d, read from name, is not above zero.
func (r *Reader) Positive(name string, d time.Duration) {
	if d <= 0 {
		r.Fail(name, "must be positive")
	}
}

// Level returns the variable as a log level (debug, info, warn or error,
// in any case; "warning" is taken for warn), or def when it is unset.
func (r *Reader) Level(name string, def slog.Level) slog.Level {
	l := def
	if v := r.lookup(name); v != "" {
		if strings.EqualFold(v, "warning") {
			v = "warn"
		}
		if err := l.UnmarshalText([]byte(v)); err != nil {
			r.Fail(name, "must be debug, info, warn or error")
			l = def
		}
	}
	r.log(name, slog.StringValue(l.String()))
	return l
}
