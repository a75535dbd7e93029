package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestKeysFlagsChecked runs every keys subcommand with bad flags and
// arguments (a case or two for each rule of pkg/auth, whose own tests go
// through the rules) against a database that cannot be reached: each is refused
// with a message naming what is wrong, before the database is asked (so
// never a driver's error), and only well-formed command lines get as far
// as connecting.
func TestKeysFlagsChecked(t *testing.T) {
	getenv := func(k string) string {
		if k == "NOTES_DATABASE_URL" {
			return "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"
		}
		return ""
	}
	for _, c := range []struct {
		args []string
		want string // in the error; "" for a line that reaches the database
	}{
		{[]string{"create"}, "--account"},
		{[]string{"create", "--account", ""}, "--account"},
		{[]string{"create", "--account", strings.Repeat("a", 101)}, "longer than 100"},
		{[]string{"create", "--account", "acme", "--scopes", ""}, `unknown scope ""`},
		{[]string{"create", "--account", "acme", "--scopes", "notes:read,notes:admin"}, `unknown scope "notes:admin"`},
		{[]string{"create", "--account", "acme", "--expires-in", "1ns"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "--expires-in", "-1h"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "--expires-in", "1000000h"}, "--expires-in must be 0"},
		{[]string{"create", "--account", "acme", "--expires-in", "soon"}, "expires-in"},
		{[]string{"create", "--account", "acme", "extra"}, "unexpected argument"},
		{[]string{"create", "--account", "acme", "--rate-per-second", "5"}, "not defined: -rate-per-second"},
		{[]string{"create", "--account", "acme", "--name", " ci"}, "--name: key name starts or ends with a space"},
		{[]string{"list", "--name", "ci"}, "--name applies to keys create only"},
		{[]string{"list", "--account", "a\nb"}, "control or non-printable"},
		{[]string{"list", "extra"}, "unexpected argument"},
		{[]string{"revoke"}, "KEY_ID"},
		{[]string{"revoke", "a\nb"}, `"a\nb" is not a key id`},
		{[]string{"revoke", "\xff\xfe"}, "is not a key id"},
		{[]string{"revoke", strings.Repeat("k", 200)}, "is not a key id"},
		{[]string{"bogus"}, "unknown keys subcommand"},
		{[]string{"create", "--account", "Acme Corp.", "--scopes", "notes:read", "--expires-in", "720h", "--name", "ci deploys"}, ""},
		{[]string{"list", "--account", "Acme Corp."}, ""},
		{[]string{"revoke", "key_01HZY3K5J8W9Q2R4T6V8X0Z2B4"}, ""},
	} {
		got := "<nil>"
		if err := run(context.Background(), append([]string{"keys"}, c.args...), getenv, &bytes.Buffer{}); err != nil {
			got = err.Error()
		}
		// A line that reaches the database fails to connect to it; any
		// other must be refused with the message wanted.
		if reached := strings.Contains(got, "127.0.0.1"); reached != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("keys %q: %s; want %q (empty: the database reached)", c.args, got, c.want)
		}
	}
}
