package keyscli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

func testOptions(limits bool, opened *int) Options {
	return Options{
		Command: "svc keys",
		Keys: keystore.Config{Scopes: []string{"read", "write"}, DefaultScopes: []string{"read"}, IDForm: "k and digits",
			ValidID: func(id string) bool {
				return strings.HasPrefix(id, "k") && strings.Trim(id[1:], "0123456789") == "" && len(id) > 1
			}},
		Limits: limits,
		Open: func(context.Context) (*keystore.Store, func(), error) {
			*opened++
			return nil, nil, errors.New("opened")
		},
	}
}

// TestRunChecksBeforeOpening: every bad command line is refused with a
// message naming what is wrong and the store never opened; a good one
// opens it once. The limit flags exist only where the service has limits.
func TestRunChecksBeforeOpening(t *testing.T) {
	for _, c := range []struct {
		limits bool
		args   []string
		want   string // in the error; "opened" for a line that opens the store
	}{
		{false, nil, "keys needs a subcommand"},
		{false, []string{"rotate"}, `unknown keys subcommand "rotate"`},
		{false, []string{"create"}, "--account NAME is required"},
		{false, []string{"create", "--account", "a", "--scopes", "read,admin"}, `unknown scope "admin" (known: read,write)`},
		{false, []string{"create", "--account", "a", "--rate-per-second", "5"}, "not defined: -rate-per-second"},
		{true, []string{"create", "--account", "a", "--rate-per-second", "1000001"}, "--rate-per-second must be between 0 (no limit) and 1000000"},
		{true, []string{"create", "--account", "a", "--monthly-quota", "-1"}, "--monthly-quota must be between"},
		{false, []string{"create", "--account", "a", "--name", strings.Repeat("n", 101)}, "--name: key name is longer than 100 bytes"},
		{false, []string{"create", "--account", "a", "--expires-in", "30s"}, "--expires-in must be 0"},
		{true, []string{"list", "--monthly-quota", "5"}, "--monthly-quota applies to keys create only"},
		{false, []string{"list", "--scopes", "read"}, "--scopes applies to keys create only"},
		{false, []string{"revoke", "--account", "a", "k1"}, "--account applies to keys create and keys list only"},
		{false, []string{"revoke"}, "exactly one KEY_ID"},
		{false, []string{"revoke", "x1"}, `"x1" is not a key id (k and digits, as keys list shows)`},
		{false, []string{"create", "--account", "a", "--name", "ci", "--scopes", "write, read", "--expires-in", "1h"}, "opened"},
		{true, []string{"create", "--account", "a", "--rate-per-second", "1000000", "--monthly-quota", "1000000000000"}, "opened"},
		{false, []string{"list", "--account", "a"}, "opened"},
		{false, []string{"revoke", "k1"}, "opened"},
	} {
		opened := 0
		err := Run(context.Background(), testOptions(c.limits, &opened), c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || (opened == 1) != (c.want == "opened") {
			t.Errorf("keys %q (limits %v): %v, opened %d times; want %q", c.args, c.limits, err, opened, c.want)
		}
	}
}

// TestKeysListEscapes: a name stored before names were checked, with a
// newline, a tab or an escape sequence, prints quoted on its own row, and
// the limit columns show where the service has limits.
func TestKeysListEscapes(t *testing.T) {
	used := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	keys := []keystore.Key{{ID: "k1", Account: "acme\nk2  FORGED\t\x1b[2J", Name: "ci\x1b[2J", Hint: "tdm_…abcd", Scopes: []string{"eod"},
		RatePerSecond: 5, CreatedAt: used, LastUsedAt: &used}}
	for _, limits := range []bool{false, true} {
		var out bytes.Buffer
		if err := printKeys(&out, keys, limits); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		fields := strings.Fields(lines[len(lines)-1])
		if len(lines) != 2 || !strings.Contains(lines[1], `"acme\nk2  FORGED\t\x1b[2J"`) || !strings.Contains(lines[1], `"ci\x1b[2J"`) ||
			strings.ContainsRune(out.String(), '\x1b') || !strings.HasSuffix(strings.Join(fields[len(fields)-3:], " "), "- - 2025-06-01T12:00:00Z") ||
			strings.Contains(lines[0], "RATE/S") != limits || strings.Contains(lines[1], "unlimited") != limits {
			t.Errorf("keys list (limits %v):\n%s", limits, out.String())
		}
	}
}
