package notesdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// planNode is the part of EXPLAIN (FORMAT JSON) a plan check reads.
type planNode struct {
	NodeType  string     `json:"Node Type"`
	IndexName string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Relation  string     `json:"Relation Name"`
	Plans     []planNode `json:"Plans"`
}

// accountRanges lists the scans of a plan that read an account's range of
// a btree: an index condition on account_id in any index but the keyed
// GIN ones, whose keys carry the account.
func (n planNode) accountRanges() []string {
	var out []string
	keyed := n.IndexName == "notes_account_tags_idx" || n.IndexName == "notes_account_search_idx"
	if n.IndexName != "" && !keyed && strings.Contains(n.IndexCond, "account_id") {
		out = append(out, n.NodeType+" "+n.IndexName+" ("+n.IndexCond+")")
	}
	for _, c := range n.Plans {
		out = append(out, c.accountRanges()...)
	}
	return out
}

// TestFilteredListingsReadOnlyKeyedPostings: no statement of a listing
// filtered by tag or by search (its count, its first batch, a keyset batch,
// in every sort) reads the account's range of a btree, in the generic plan
// the service's sessions use. Such a plan reads every note of the account
// for every listing: cost that grows with the account, not the matches.
// Sequential scans and plain index scans are disabled for the check: on a
// test-sized table walking a whole index in the page's order wins, where on
// a real one the planner expects to walk far too many rows to keep 20. What
// stays open is the choice this checks: the keyed postings alone, or ANDed
// with the account's range of a btree.
func TestFilteredListingsReadOnlyKeyedPostings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 30 {
		f.create(t, f.a, notes.Draft{Title: fmt.Sprintf("note %d", i), Content: "quarterly dividend memo", Tags: []string{"research", "t" + fmt.Sprint(i%3)}})
		f.create(t, f.b, notes.Draft{Title: "other", Content: "quarterly dividend memo", Tags: []string{"research"}})
	}
	if _, err := f.db.ExecContext(ctx, "ANALYZE notes"); err != nil {
		t.Fatal(err)
	}
	after := listWith(t, f.store, f.a, notes.ListQuery{Limit: 1})[0]
	conn, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off"); err != nil {
		t.Fatal(err)
	}
	for setting, want := range map[string]string{"plan_cache_mode": "force_generic_plan", "max_parallel_workers_per_gather": "0"} {
		var got string
		if err := conn.QueryRowContext(ctx, "SHOW "+setting).Scan(&got); err != nil || got != want {
			t.Fatalf("%s = %q (%v), want the service's %q", setting, got, err, want)
		}
	}
	filters := map[string]notes.ListQuery{
		"tag":         {Tags: []string{"research"}},
		"two tags":    {Tags: []string{"research", "t1"}},
		"search":      {Search: "dividend"},
		"tag, search": {Tags: []string{"t2"}, Search: "quarterly"},
	}
	sorts := []notes.Sort{notes.SortCreatedAsc, notes.SortCreatedDesc, notes.SortUpdatedAsc, notes.SortUpdatedDesc, notes.SortTitle}
	for name, q := range filters {
		for _, srt := range sorts {
			q.Sort = srt
			for i, stmt := range f.store.ListingStatements(f.a, q, after) {
				var raw string
				if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+stmt[0].(string), stmt[1:]...).Scan(&raw); err != nil {
					t.Fatalf("%s %s #%d: explain: %v", name, srt, i, err)
				}
				var plans []struct {
					Plan planNode `json:"Plan"`
				}
				if err := json.Unmarshal([]byte(raw), &plans); err != nil || len(plans) != 1 {
					t.Fatalf("%s %s #%d: plan %s: %v", name, srt, i, raw, err)
				}
				if r := plans[0].Plan.accountRanges(); len(r) > 0 {
					t.Errorf("%s sorted %s, statement %d reads the account's range of a btree: %v", name, srt, i, r)
				}
			}
		}
	}
}
