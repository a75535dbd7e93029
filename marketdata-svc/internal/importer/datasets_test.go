package importer

import (
	"strings"
	"testing"
)

// TestReadDatasetReportsEveryBadRowByLine holds the dataset kinds to the
// rule of the other kinds: every bad row is reported as file:line, and a
// file with one is refused whole.
func TestReadDatasetReportsEveryBadRowByLine(t *testing.T) {
	for _, c := range []struct {
		kind, file string
		want       []string
	}{
		{"commodities", "commodity_name,commodity_unit,date,price\n" +
			"gold,USD/t.oz,2025-01-02,2650.5\n" +
			",USD/t.oz,2025-01-03,2650\n" +
			"gold,USD/t.oz,2025-13-01,2650\n" +
			"gold,USD/t.oz,2025-01-06,-1\n" +
			"GOLD,USD/t.oz,2025-01-02,2651\n",
			[]string{"f.csv:3: commodity_name", "f.csv:4: invalid date", "f.csv:5: negative price", "f.csv:6: duplicate of line 2"}},
		{"commodities", "commodity_name,date\ngold,2025-01-02\n", []string{"f.csv:1: missing column price"}},
		{"ratings", "ticker,company_name,analyst_name,analyst_firm,analyst_role,date_rating,target_date,price_target,rated,conclusion\n" +
			"GOOG,Alphabet,A,F,Analyst,2025-01-02,2026-01-02,200,Buy,Outperform\n" +
			"GO OG,Alphabet,A,F,Analyst,2025-01-03,,,buy,\n" +
			"GOOG,Alphabet,,F,Analyst,2025-01-03,,,buy,\n" +
			"GOOG,Alphabet,A,F,Analyst,2025-01-03,,,strong buy,\n" +
			"GOOG,Alphabet,A,F,Analyst,2025-01-03,soon,,buy,\n" +
			"GOOG,Alphabet,A,F,Analyst,2025-01-03,,lots,buy,\n" +
			"goog,Alphabet,A,F,Analyst,2025-01-02,,,hold,\n",
			[]string{"f.csv:3: ticker", "f.csv:4: analyst_name", "f.csv:5: rated", "f.csv:6: target_date", "f.csv:7: invalid price_target", "f.csv:8: duplicate of line 2"}},
		{"bonds", "country,region,type,date,yield\n" +
			"Germany,Europe,10Y,2025-01-02,-0.25\n" +
			",Europe,10Y,2025-01-03,2.5\n" +
			"germany,Europe,,2025-01-03,2.5\n" +
			"germany,Europe,10Y,2025-01-03,NaN\n" +
			"germany,Europe,10y,2025-01-02,2.5\n",
			[]string{"f.csv:3: country", "f.csv:4: type", "f.csv:5: invalid yield", "f.csv:6: duplicate of line 2"}},
		{"etfs", "ticker,report_date,date_signed,final_filing,holding_name,balance\n" +
			"SMPL,2025-06-30,2025-08-20,false,Apple Inc.,12\n" +
			"SM PL,2025-06-30,,,Apple Inc.,12\n" +
			"SMPL,June,,,Apple Inc.,12\n" +
			"SMPL,2025-06-30,,,,12\n" +
			"SMPL,2025-06-30,,,Apple Inc.,many\n" +
			"SMPX,2025-06-30,later,,Apple Inc.,1\n" +
			"SMPY,2025-06-30,,maybe,Apple Inc.,1\n",
			[]string{"f.csv:3: ticker", "f.csv:4: report_date", "f.csv:5: empty holding name", "f.csv:6: invalid balance", "f.csv:7: date_signed", "f.csv:8: final_filing"}},
	} {
		_, _, err := ReadDataset("f.csv", strings.NewReader(c.file), c.kind)
		if err == nil {
			t.Errorf("%s: no error, want %q", c.kind, c.want)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(c.want) {
			t.Errorf("%s: %q, want %d lines starting %q", c.kind, lines, len(c.want), c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: line %d %q, want it to start %q", c.kind, i, lines[i], w)
			}
		}
	}
	l, n, err := ReadDataset("f.csv", strings.NewReader("Commodity Name,Commodity Unit,Date,Price\nCrude Oil,USD/Bbl,2025-01-02,71.5\n"), "commodities")
	if err != nil || n != 1 || l.Commodities[0].Name != "crude oil" || l.Commodities[0].Price != 71.5 || l.Commodities[0].Unit != "USD/Bbl" {
		t.Errorf("good file: %+v %d %v", l, n, err)
	}
	if _, _, err := ReadDataset("f.csv", strings.NewReader("a\n1\n"), "nope"); err == nil {
		t.Error("unknown kind: no error")
	}
}

// TestReadETFsGroupsHoldingsByFiling: rows of one ticker and report date
// are one filing, its holdings in the file's order.
func TestReadETFsGroupsHoldingsByFiling(t *testing.T) {
	l, n, err := ReadDataset("f.csv", strings.NewReader("ticker,report_date,fund_name,holding_name,value_usd\n"+
		"SMPL,2025-06-30,Trust,A,1\nSMPL,2025-09-30,Trust,C,3\nSMPL,2025-06-30,Trust,B,-2\n"), "etfs")
	if err != nil || n != 3 || len(l.ETFs) != 2 {
		t.Fatalf("%+v %d %v", l, n, err)
	}
	june := l.ETFs[0]
	if june.Filing.FundName != "Trust" || len(june.Holdings) != 2 || june.Holdings[0].Name != "A" || *june.Holdings[1].ValueUSD != -2 {
		t.Errorf("june: %+v", june)
	}
}
