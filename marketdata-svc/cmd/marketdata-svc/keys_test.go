package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestKeysFlagsChecked runs every keys subcommand with bad flags and
// arguments against a database that cannot be reached: each is refused
// with a message naming what is wrong, before the database is asked (so
// never a driver's error), and only well-formed command lines get as far
// as connecting.
func TestKeysFlagsChecked(t *testing.T) {
	getenv := func(k string) string {
		if k == "MARKETDATA_DATABASE_URL" {
			return "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"
		}
		return ""
	}
	keysRun := func(args ...string) error {
		return run(context.Background(), append([]string{"keys"}, args...), getenv, &bytes.Buffer{})
	}
	for _, c := range []struct {
		args []string
		want string // in the error; "" for a line that reaches the database
	}{
		{[]string{"create"}, "--account"},
		{[]string{"create", "--account", ""}, "--account"},
		{[]string{"create", "--account", "acme\nFORGED key"}, "control or non-printable"},
		{[]string{"create", "--account", strings.Repeat("a", 101)}, "longer than 100"},
		{[]string{"create", "--account", "acme", "--scopes", ""}, "unknown scope \"\""},
		{[]string{"create", "--account", "acme", "--scopes", " , "}, "unknown scope"},
		{[]string{"create", "--account", "acme", "--scopes", "eod,bogus"}, "unknown scope \"bogus\""},
		{[]string{"create", "--account", "acme", "--rate-per-second", "99999999999"}, "--rate-per-second must be between 0 (no limit) and 1000000, got 99999999999"},
		{[]string{"create", "--account", "acme", "--rate-per-second", "-1"}, "--rate-per-second must be between"},
		{[]string{"create", "--account", "acme", "--rate-per-second", "many"}, "rate-per-second"},
		{[]string{"create", "--account", "acme", "--monthly-quota", "-5"}, "--monthly-quota must be between"},
		{[]string{"create", "--account", "acme", "--monthly-quota", "99999999999999999"}, "--monthly-quota must be between"},
		{[]string{"create", "--account", "acme", "--expires-in", "1ns"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "--expires-in", "-1h"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "--expires-in", "1000000h"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "extra"}, "unexpected argument"},
		{[]string{"list", "extra"}, "unexpected argument"},
		{[]string{"list", "--rate-per-second", "5"}, "applies to keys create only"},
		{[]string{"revoke"}, "KEY_ID"},
		{[]string{"revoke", "not-a-key-id"}, "not a key id"},
		{[]string{"revoke", "a\nb"}, `"a\nb"`},
		{[]string{"revoke", "--account", "acme", "7d9f4b8e-4a7e-4c3b-9a51-2f6a1f0f6e11"}, "--account applies to keys create and keys list only"},
		{[]string{"create", "--account", "acme", "--name", "a\tb"}, "--name: key name has a control"},
		{[]string{"list", "--account", "a\nb"}, "control or non-printable"},
		{[]string{"bogus"}, "unknown keys subcommand"},
		{[]string{"create", "--account", "Acme Corp.", "--scopes", "eod, tickers", "--rate-per-second", "1000000", "--monthly-quota", "1000000000000", "--expires-in", "720h", "--name", "ci deploys"}, ""},
		{[]string{"list"}, ""},
		{[]string{"list", "--account", "Acme Corp."}, ""},
		{[]string{"revoke", "7d9f4b8e-4a7e-4c3b-9a51-2f6a1f0f6e11"}, ""},
	} {
		err := keysRun(c.args...)
		reached := err != nil && strings.Contains(err.Error(), "127.0.0.1")
		switch {
		case c.want == "" && !reached:
			t.Errorf("keys %q: %v, want it to reach the database", c.args, err)
		case c.want != "" && (err == nil || reached || !strings.Contains(err.Error(), c.want)):
			t.Errorf("keys %q: %v, want an error with %q before the database", c.args, err, c.want)
		}
	}
}
