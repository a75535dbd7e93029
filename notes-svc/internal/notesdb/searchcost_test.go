package notesdb_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// costNode is the part of EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) a cost
// check reads.
type costNode struct {
	NodeType        string     `json:"Node Type"`
	ActualRows      float64    `json:"Actual Rows"`
	ActualLoops     float64    `json:"Actual Loops"`
	RemovedByFilter float64    `json:"Rows Removed by Filter"`
	RemovedRecheck  float64    `json:"Rows Removed by Index Recheck"`
	SharedHit       int        `json:"Shared Hit Blocks"`
	SharedRead      int        `json:"Shared Read Blocks"`
	Plans           []costNode `json:"Plans"`
}

// examined counts the rows the scans of the plan produced or threw away:
// what an index handed over, and each row a heap scan read.
func (n costNode) examined() int {
	out := 0
	switch n.NodeType {
	case "Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan":
		out = int((n.ActualRows + n.RemovedByFilter + n.RemovedRecheck) * n.ActualLoops)
	}
	for _, c := range n.Plans {
		out += c.examined()
	}
	return out
}

// statementCost is what one statement read: rows examined, and buffers
// touched (the top node's count includes its children's).
type statementCost struct{ rows, buffers int }

// explainGeneric runs stmt (its SQL, then its arguments) as the store
// does, a prepared statement on a session with the service's settings, so
// that the plan is the generic one the service runs; and reports its cost.
func explainGeneric(ctx context.Context, t *testing.T, conn *sql.Conn, stmt []any) statementCost {
	t.Helper()
	var cost statementCost
	err := conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		if _, err := c.Exec(ctx, "PREPARE cost_probe AS "+stmt[0].(string)); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _, _ = c.Exec(ctx, "DEALLOCATE cost_probe") }()
		// The arguments go into EXECUTE as literals, quoted by pgx.
		exec := "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE cost_probe("
		for i := range stmt[1:] {
			if i > 0 {
				exec += ", "
			}
			exec += fmt.Sprintf("$%d", i+1)
		}
		args := append([]any{pgx.QueryExecModeSimpleProtocol}, stmt[1:]...)
		var raw string
		if err := c.QueryRow(ctx, exec+")", args...).Scan(&raw); err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		var plans []struct {
			Plan costNode `json:"Plan"`
		}
		if err := json.Unmarshal([]byte(raw), &plans); err != nil || len(plans) != 1 {
			return fmt.Errorf("plan %s: %v", raw, err)
		}
		p := plans[0].Plan
		cost = statementCost{rows: p.examined(), buffers: p.SharedHit + p.SharedRead}
		return nil
	})
	if err != nil {
		t.Fatalf("%.120s: %v", stmt[0], err)
	}
	return cost
}

// loadTenants adds the accounts other000001.. up to total, each with
// perAccount notes that hold the caller's words and tags, in one
// statement each, and brings the table's statistics and GIN indexes up to
// date as autovacuum would.
func loadTenants(ctx context.Context, t *testing.T, db *sql.DB, from, total, perAccount int) {
	t.Helper()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, name) SELECT 'acc_other' || lpad(g::text, 6, '0'), 'other' || g FROM generate_series($1::int, $2::int) g`,
			[]any{from, total}},
		{`INSERT INTO notes (id, account_id, title, content, tags, created_at, updated_at)
		SELECT 'other_' || a || '_' || n, 'acc_other' || lpad(a::text, 6, '0'), 'note ' || n,
			'alpha bravo charlie quarterly memo ' || (a * n % 97), ARRAY['research', 't' || (n % 5)],
			now() - n * interval '1 minute', now() - n * interval '1 minute'
		FROM generate_series($1::int, $2::int) a, generate_series(1, $3::int) n`, []any{from, total, perAccount}},
		{`VACUUM ANALYZE notes`, nil},
	} {
		if _, err := db.ExecContext(ctx, stmt.sql, stmt.args...); err != nil {
			t.Fatalf("load tenants: %v", err)
		}
	}
}

// TestSearchCostIsTheCallersOwn: every shape of search or tag filter,
// in each statement of a listing (its count, its first batch, a keyset
// batch), costs in proportion to the caller's own notes, whatever the
// other accounts hold: at 100 and at 5,000 other accounts, under the
// generic plan the service's sessions use. A filter that an index cannot
// answer from the caller's keys alone (a negation matches every note
// without the word) once made the keyed GIN index hand over every note of
// every account for a recheck, so one tenant's query read the whole table.
func TestSearchCostIsTheCallersOwn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const own = 30
	for i := range own {
		content := [...]string{"alpha bravo memo", "alpha only", "delta echo"}[i%3]
		f.create(t, f.a, notes.Draft{Title: fmt.Sprintf("mine %d", i), Content: content, Tags: []string{"research", "t" + fmt.Sprint(i%2)}})
	}
	after := listWith(t, f.store, f.a, notes.ListQuery{Limit: 1})[0]
	shapes := []struct {
		name string
		q    notes.ListQuery
		want int64 // the caller's notes that match
	}{
		{"word", notes.ListQuery{Search: "alpha"}, 20},
		{"negation", notes.ListQuery{Search: "-alpha"}, 10},
		{"negated phrase", notes.ListQuery{Search: `-"alpha bravo"`}, 20},
		{"phrase", notes.ListQuery{Search: `"alpha bravo"`}, 10},
		// websearch_to_tsquery has no prefix syntax; the input is read as
		// words, and must cost no more than they do.
		{"prefix", notes.ListQuery{Search: "alph:*"}, 0},
		{"word or negation", notes.ListQuery{Search: "delta or -alpha"}, 10},
		{"stop words", notes.ListQuery{Search: "the of"}, 0},
		{"negated stop word", notes.ListQuery{Search: "-the"}, 0},
		{"tag", notes.ListQuery{Tags: []string{"research"}}, own},
		{"two tags", notes.ListQuery{Tags: []string{"research", "t1"}}, 15},
		{"tag, word", notes.ListQuery{Tags: []string{"t0"}, Search: "alpha"}, 10},
		{"tag, negation", notes.ListQuery{Tags: []string{"research"}, Search: "-alpha"}, 10},
	}
	conn, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for setting, want := range map[string]string{"plan_cache_mode": "force_generic_plan", "max_parallel_workers_per_gather": "0"} {
		var got string
		if err := conn.QueryRowContext(ctx, "SHOW "+setting).Scan(&got); err != nil || got != want {
			t.Fatalf("%s = %q (%v), want the service's %q", setting, got, err, want)
		}
	}
	measure := func() map[string]statementCost {
		out := map[string]statementCost{}
		for _, s := range shapes {
			for i, stmt := range f.store.ListingStatements(f.a, s.q, after) {
				out[fmt.Sprintf("%s #%d", s.name, i)] = explainGeneric(ctx, t, conn, stmt)
			}
		}
		return out
	}
	// 100 accounts of 20 notes, then 4,900 more of 4: ten times the notes
	// of others.
	loadTenants(ctx, t, f.db.DB, 1, 100, 20)
	at100 := measure()
	loadTenants(ctx, t, f.db.DB, 101, 5000, 4)
	at5000 := measure()
	for _, s := range shapes {
		if got, err := f.store.CountNotes(ctx, f.a, s.q); err != nil || got != s.want {
			t.Errorf("%s: %d notes (%v), want %d", s.name, got, err, s.want)
		}
	}

	// Each scan may hand over each of the caller's notes once (a bitmap's
	// index and heap scans both count it), plus the few of bob's; the
	// buffers are the caller's heap pages and index pages, a few per note
	// at most.
	const maxRows, maxBuffers = 3 * own, 3*own + 30
	for _, s := range shapes {
		for i := range 3 {
			k := fmt.Sprintf("%s #%d", s.name, i)
			c100, c5000 := at100[k], at5000[k]
			t.Logf("%-24s rows %5d → %5d, buffers %4d → %4d", k, c100.rows, c5000.rows, c100.buffers, c5000.buffers)
			for _, c := range []statementCost{c100, c5000} {
				if c.rows > maxRows || c.buffers > maxBuffers {
					t.Errorf("%s (statement %d): %d rows examined and %d buffers at 100 other accounts, %d and %d at 5,000; want at most %d rows and %d buffers for the caller's %d notes",
						s.name, i, c100.rows, c100.buffers, c5000.rows, c5000.buffers, maxRows, maxBuffers, own)
					break
				}
			}
		}
	}
}
