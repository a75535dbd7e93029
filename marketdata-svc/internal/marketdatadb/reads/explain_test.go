package reads_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestEODQueryPlansUseIndexes loads 40 symbols × 500 trading days, runs
// ANALYZE, and checks that every EOD statement reads eod_bars through its
// primary key instead of scanning the table. docs/DATA.md shows the plans.
func TestEODQueryPlansUseIndexes(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	var rows []ingest.BarRow
	start := testenv.Day("2020-01-01")
	for i := range 40 {
		sym := fmt.Sprintf("S%02d", i)
		for d := range 500 {
			c := 100 + float64(d%50)
			rows = append(rows, ingest.BarRow{Symbol: sym, Date: start.AddDate(0, 0, d), Open: c, High: c + 1, Low: c - 1, Close: c, Volume: 1})
		}
	}
	if _, err := s.Ingest.Apply(ctx, ingest.Load{Bars: ingest.Bars(rows)}); err != nil {
		t.Fatal(err)
	}
	db := s.DB()
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE eod_bars"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE tickers"); err != nil {
		t.Fatal(err)
	}
	syms := []string{"S07", "S03"}
	from, to := testenv.Day("0001-01-01"), testenv.Day("2021-03-01")
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"symbols and total", reads.EODSymbolsSQL, []any{syms, "", from, to, false}},
		{"symbols and total, latest", reads.EODSymbolsSQL, []any{syms, "", from, to, true}},
		{"page", reads.EODPageDesc, []any{syms, from, to, 100, 100, 0}},
		{"latest", reads.EODLatestDesc, []any{syms, from, to, 100, 0}},
	} {
		plan := explain(t, db, c.sql, c.args...)
		t.Logf("%s:\n%s", c.name, plan)
		if strings.Contains(plan, "Seq Scan on eod_bars") || !strings.Contains(plan, "eod_bars_pkey") {
			t.Errorf("%s: plan does not use the eod_bars primary key:\n%s", c.name, plan)
		}
		// Latest learns that a symbol has a bar from its first one,
		// however long its history.
		if strings.HasSuffix(c.name, "latest") && c.sql == reads.EODSymbolsSQL && !strings.Contains(plan, "Limit") {
			t.Errorf("%s: the count of a symbol's bars is not cut at one:\n%s", c.name, plan)
		}
	}
}

func explain(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
