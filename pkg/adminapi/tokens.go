package adminapi

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// MinTokenBytes is the shortest admin token accepted: 32 bytes, as
// `openssl rand -hex 16` prints, leave no room for guessing.
const MinTokenBytes = 32

// tokenName is what an admin token's name may be: it is written to the
// audit trail and to logs, so nothing that could break or forge a line.
var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// token is a configured admin token: its name and the SHA-256 of its
// value, which is all that stays in memory.
type token struct {
	name string
	hash [sha256.Size]byte
}

// Tokens are the admin tokens of a token file: one "name:token" a line,
// blank lines and lines starting with # ignored. Several may be valid at
// once, so that a token is rotated by adding its successor, moving the
// callers, then removing it. The file is read again when it changes (a
// Kubernetes Secret volume is updated in place), checked on each request;
// a changed file that does not parse leaves the previous tokens in force.
type Tokens struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	tokens  []token
	// reloadErr is the last reload's failure, reported once.
	reloadErr func(error)
}

// LoadTokens reads the token file at path; onReloadError, when set, hears
// of a changed file that could not be used.
func LoadTokens(path string, onReloadError func(error)) (*Tokens, error) {
	t := &Tokens{path: path, reloadErr: onReloadError}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("admin tokens: %w", err)
	}
	toks, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	t.tokens, t.modTime, t.size = toks, fi.ModTime(), fi.Size()
	return t, nil
}

func readTokens(path string) ([]token, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("admin tokens: %w", err)
	}
	return parseTokens(string(b))
}

// parseTokens reads the lines of a token file. Errors name the line,
// never the token.
func parseTokens(text string) ([]token, error) {
	var out []token
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, fmt.Errorf("admin tokens: line %d: want name:token", n)
		case !tokenName.MatchString(name):
			return nil, fmt.Errorf("admin tokens: line %d: a name is 1 to 64 letters, digits, '.', '_' or '-'", n)
		case name == keystore.ActorCLI || name == keystore.ActorSystem:
			return nil, fmt.Errorf("admin tokens: line %d: %q names the keys command or the system in the audit trail", n, name)
		case len(value) < MinTokenBytes:
			return nil, fmt.Errorf("admin tokens: line %d (%s): a token has at least %d bytes", n, name, MinTokenBytes)
		}
		for _, t := range out {
			if t.name == name {
				return nil, fmt.Errorf("admin tokens: line %d: name %s repeats", n, name)
			}
		}
		out = append(out, token{name: name, hash: sha256.Sum256([]byte(value))})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("admin tokens: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("admin tokens: the file holds no token")
	}
	return out, nil
}

// Match returns the name of the token presented, comparing its hash with
// every configured one in constant time and without stopping at a match,
// so that the time taken tells nothing about which token came close.
func (t *Tokens) Match(presented string) (string, bool) {
	h := sha256.Sum256([]byte(presented))
	name, found := "", 0
	for _, tok := range t.current() {
		eq := subtle.ConstantTimeCompare(tok.hash[:], h[:])
		if eq == 1 {
			name = tok.name
		}
		found |= eq
	}
	return name, found == 1
}

// current returns the tokens, read again first if the file changed.
func (t *Tokens) current() []token {
	t.mu.Lock()
	defer t.mu.Unlock()
	fi, err := os.Stat(t.path)
	if err != nil || (fi.ModTime().Equal(t.modTime) && fi.Size() == t.size) {
		return t.tokens
	}
	toks, err := readTokens(t.path)
	t.modTime, t.size = fi.ModTime(), fi.Size()
	if err != nil {
		if t.reloadErr != nil {
			t.reloadErr(err)
		}
		return t.tokens
	}
	t.tokens = toks
	return t.tokens
}
