package sqlcapture

import (
	"strings"
	"testing"
)

const sample = `2025-11-21 05:30:00.100 UTC [900] LOG:  statement: SELECT 'bench-probe:get:start'
2025-11-21 05:30:00.200 UTC [901] LOG:  execute stmtcache_1: SELECT id, title
	FROM notes WHERE account_id = $1 AND id = $2 LIMIT 1
2025-11-21 05:30:00.200 UTC [901] DETAIL:  parameters: $1 = 'acc_1', $2 = 'it''s'
2025-11-21 05:30:00.250 UTC [777] LOG:  checkpoint starting: time
2025-11-21 05:30:00.300 UTC [902] LOG:  execute <unnamed>: UPDATE api_keys SET last_used_at = $1
2025-11-21 05:30:00.300 UTC [902] DETAIL:  parameters: $1 = NULL
2025-11-21 05:30:00.400 UTC [900] LOG:  statement: SELECT 'bench-probe:get:end'
`

func TestParseAndBetween(t *testing.T) {
	stmts := Parse(sample)
	got, err := Between(stmts, "bench-probe:get:start", "bench-probe:get:end", func(s Statement) bool {
		return strings.Contains(s.SQL, "api_keys")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d statements: %+v", len(got), got)
	}
	s := got[0]
	if !strings.Contains(s.SQL, "FROM notes WHERE") || len(s.Params) != 2 || *s.Params[1] != "it's" {
		t.Fatalf("got %+v", s)
	}
	if _, err := Between(stmts, "nope", "bench-probe:get:end", nil); err == nil {
		t.Fatal("want an error for a missing marker")
	}
}

func TestParseParamsNull(t *testing.T) {
	p := parseParams("$1 = NULL, $2 = '{A,B}', $3 = ''")
	if len(p) != 3 || p[0] != nil || *p[1] != "{A,B}" || *p[2] != "" {
		t.Fatalf("got %v", p)
	}
}

func TestBuildScript(t *testing.T) {
	a, b := "acc_1", "note_X"
	lim := "100"
	stmts := []Statement{{SQL: "SELECT *\n FROM notes WHERE account_id = $1 AND id = $2 LIMIT $3", Params: []*string{&a, &b, &lim}}}
	sc := BuildScript(stmts, func(v string) string {
		switch v {
		case "acc_1":
			return "acc"
		case "note_X":
			return "note"
		}
		return ""
	}, "\\set x 1\n")
	want := "\\set x 1\nSELECT * FROM notes WHERE account_id = :acc AND id = :note LIMIT :c1;\n"
	if sc.Text != want {
		t.Fatalf("script\n%s\nwant\n%s", sc.Text, want)
	}
	if sc.Constants["c1"] != "100" {
		t.Fatalf("constants %v", sc.Constants)
	}
}

func TestCommon(t *testing.T) {
	a := []Statement{{SQL: "A"}, {SQL: "poll"}, {SQL: "B"}}
	b := []Statement{{SQL: "A"}, {SQL: "B"}}
	got := Common(a, b)
	if len(got) != 2 || got[0].SQL != "A" || got[1].SQL != "B" {
		t.Fatalf("got %+v", got)
	}
}
