package auth

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxAccountNameBytes bounds an account name, as both services' accounts
// tables do.
const MaxAccountNameBytes = 100

// CheckAccountName is the rule both services' key commands apply to an
// account name before it reaches the database: 1 to MaxAccountNameBytes
// bytes of UTF-8, printable characters only (a newline or an escape
// sequence in a name would break or forge lines of `keys list` and of
// anything else that prints it), no space at either end.
func CheckAccountName(name string) error {
	switch {
	case name == "":
		return errors.New("account name is empty")
	case len(name) > MaxAccountNameBytes:
		return errors.New("account name is longer than " + strconv.Itoa(MaxAccountNameBytes) + " bytes")
	case !utf8.ValidString(name):
		return errors.New("account name is not valid UTF-8")
	case strings.TrimSpace(name) != name:
		return errors.New("account name starts or ends with a space")
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) || (unicode.IsSpace(r) && r != ' ') {
			return errors.New("account name has a control or non-printable character " + strconv.QuoteRune(r))
		}
	}
	return nil
}

// Printable returns s as it may be printed on a terminal or in a table:
// unchanged when every character is printable (spaces included), else
// quoted with Go's escapes, so that a stored name with a newline, a tab or
// an escape sequence shows as what it is instead of breaking the output.
func Printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || (unicode.IsSpace(r) && r != ' ') {
			return strconv.Quote(s)
		}
	}
	return s
}

// ParseScopes reads a comma-separated scope list as both services' key
// commands take it: every item one of known, at least one, repeats
// dropped. An empty list is an error, never "every scope": a key's reach
// must be asked for, not fallen into by an empty variable in a script.
func ParseScopes(list string, known []string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("unknown scope %s (known: %s)", strconv.Quote(s), strings.Join(known, ","))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Key lifetimes a key command accepts besides 0 (never expires): under a
// minute a key is dead before it is handed over; past ten years it is a
// typo for "never", which 0 says.
const (
	MinKeyLifetime = time.Minute
	MaxKeyLifetime = 10 * 365 * 24 * time.Hour
)

// CheckKeyLifetime checks a key command's --expires-in: 0, or from
// MinKeyLifetime to MaxKeyLifetime.
func CheckKeyLifetime(d time.Duration) error {
	if d != 0 && (d < MinKeyLifetime || d > MaxKeyLifetime) {
		return fmt.Errorf("must be 0 (never expires) or between %s and %s, got %s", MinKeyLifetime, MaxKeyLifetime, d)
	}
	return nil
}
