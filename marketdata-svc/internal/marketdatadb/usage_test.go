package marketdatadb_test

import (
	"context"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// The durable usage copy is raised, never lowered, per key and month.
func TestUsageCopyOnlyRises(t *testing.T) {
	ctx := context.Background()
	s := testenv.Store(t)
	for _, save := range []struct {
		month string
		used  map[string]int64
	}{
		{"2026-03", map[string]int64{"a": 10, "b": 3}},
		{"2026-03", map[string]int64{"a": 4, "b": 7}}, // a counter Redis lost reads 4
		{"2026-04", map[string]int64{"a": 1}},
	} {
		if err := s.SaveUsage(ctx, save.month, save.used); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.LoadUsage(ctx, "2026-03", nil)
	if err != nil || len(all) != 2 || all["a"] != 10 || all["b"] != 7 {
		t.Errorf("March: %v, %v; want a=10 b=7", all, err)
	}
	some, err := s.LoadUsage(ctx, "2026-04", []string{"a", "b"})
	if err != nil || len(some) != 1 || some["a"] != 1 {
		t.Errorf("April's a and b: %v, %v; want a=1 alone", some, err)
	}
	if _, err := s.LoadUsage(ctx, "April", nil); err == nil {
		t.Error("a month that does not parse was accepted")
	}
}
