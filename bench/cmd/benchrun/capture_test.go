package main

import (
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// TestSQLDiff: the minimal server's statements must be the service's, in
// text and order; a column more on one side, a statement more or the
// same statements swapped are each told apart.
func TestSQLDiff(t *testing.T) {
	stmts := func(sql ...string) []sqlcapture.Statement {
		out := make([]sqlcapture.Statement, len(sql))
		for i, s := range sql {
			out[i] = sqlcapture.Statement{SQL: s, PID: "1"}
		}
		return out
	}
	count, page := `SELECT count(*) FROM "notes" WHERE account_id = $1`, `SELECT "id","pinned" FROM "notes" WHERE account_id = $1 LIMIT $2`
	if d := sqlDiff(stmts(count, page), stmts(count, page)); d != "" {
		t.Errorf("the same statements differ: %s", d)
	}
	for name, minimal := range map[string][]sqlcapture.Statement{
		"a column fewer":   stmts(count, `SELECT "id" FROM "notes" WHERE account_id = $1 LIMIT $2`),
		"a statement less": stmts(page),
		"swapped":          stmts(page, count),
	} {
		if d := sqlDiff(stmts(count, page), minimal); !strings.Contains(d, "notes-svc ran") {
			t.Errorf("%s: no difference reported (%q)", name, d)
		}
	}
}
