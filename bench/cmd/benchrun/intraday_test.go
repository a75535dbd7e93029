package main

import (
	"strings"
	"testing"
	"time"
)

func TestWithoutPartitionList(t *testing.T) {
	many := "Partitioned table \"public.intraday_bars\"\n Column | Type\nPartition key: RANGE (ts)\nIndexes:\n    \"intraday_bars_pkey\" PRIMARY KEY, btree (symbol, ts)\n" +
		"Partitions: intraday_bars_2025_01 FOR VALUES FROM ('2025-01-01') TO ('2025-02-01'),\n            intraday_bars_2025_02 FOR VALUES FROM ('2025-02-01') TO ('2025-03-01')\n\n"
	one := strings.Replace(many, ",\n            intraday_bars_2025_02 FOR VALUES FROM ('2025-02-01') TO ('2025-03-01')", "", 1)
	if withoutPartitionList(many) != withoutPartitionList(one) {
		t.Fatalf("partition lists of different length still differ:\n%s\n---\n%s", withoutPartitionList(many), withoutPartitionList(one))
	}
	if !strings.Contains(withoutPartitionList(many), `"intraday_bars_pkey" PRIMARY KEY`) {
		t.Fatal("the index lines must stay")
	}
	changed := strings.Replace(one, "btree (symbol, ts)", "btree (ts)", 1)
	if withoutPartitionList(changed) == withoutPartitionList(one) {
		t.Fatal("a different primary key must show")
	}
}

// The months of the dataset and their partition statements follow the
// trading days: 257 weekdays from 6 January 2025 end on 30 December.
func TestIntradayMonths(t *testing.T) {
	b := &bench{cfg: config{IntradayDays: 257}}
	months := b.intradayMonths()
	if len(months) != 12 || !months[0].Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) || months[11].Month() != time.December {
		t.Fatalf("months %v", months)
	}
	if d := intradayDay(256); d.Format(time.DateOnly) != "2025-12-30" {
		t.Fatalf("day 256 is %s", d)
	}
	name, ddl := partitionDDL(months[1])
	if name != "intraday_bars_2025_02" || !strings.Contains(ddl, "FROM ('2025-02-01 00:00:00+00') TO ('2025-03-01 00:00:00+00')") {
		t.Fatalf("%s: %s", name, ddl)
	}
}

func TestRepeatedSymbol(t *testing.T) {
	for v, want := range map[string]int{"{IB0001,IB0001,IB0001}": 3, "{IB0001}": 1, "{IB0001,IB0002}": 0, "{America/New_York}": 0, "IB0001": 0} {
		if got := repeatedSymbol(v, "IB0001"); got != want {
			t.Errorf("repeatedSymbol(%q) = %d, want %d", v, got, want)
		}
	}
}

// The walk's symbol and day counts stay coprime, so requests are distinct
// for a whole cycle.
func TestIntradaySpreadCoprime(t *testing.T) {
	for _, c := range []config{{Accounts: 100, IntradaySymbols: 500, IntradayDays: 257}, {Accounts: 100, IntradaySymbols: 500, IntradayDays: 250}} {
		b := &bench{cfg: c}
		syms, days := b.intradaySpread()
		if gcd(len(syms), len(days)) != 1 || len(syms) != 100 || len(days) < c.IntradayDays-5 {
			t.Fatalf("%d symbols, %d days", len(syms), len(days))
		}
		seen := map[[2]int]bool{}
		for g := range len(syms) * len(days) {
			k := [2]int{g % len(syms), g % len(days)}
			if seen[k] {
				t.Fatalf("request %d repeats %v", g, k)
			}
			seen[k] = true
		}
	}
}
