package main

import "testing"

func TestMedianRoundIsAMeasuredRound(t *testing.T) {
	pair := func(tag float64) TenantPair { return TenantPair{TagP50Ratio: tag} }
	tag := func(p TenantPair) float64 { return p.TagP50Ratio }
	for _, c := range []struct {
		ratios []float64
		want   float64
	}{
		{[]float64{1.4}, 1.4},
		{[]float64{1.36, 0.96, 1.1}, 1.1},
		{[]float64{2, 1, 4, 3}, 3},
	} {
		var pairs []TenantPair
		for _, r := range c.ratios {
			pairs = append(pairs, pair(r))
		}
		if got := medianRound(pairs, tag).TagP50Ratio; got != c.want {
			t.Errorf("medianRound(%v) = %v, want %v", c.ratios, got, c.want)
		}
	}
}
