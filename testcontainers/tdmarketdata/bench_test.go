package tdmarketdata

import (
	"slices"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// BenchmarkRunWithDemoData measures what a consumer's test waits for:
// Run with the demo data until the key exists and /readyz answers.
// Teardown is outside the timer. The median of the runs is reported as
// s/start-median, beside the mean that ns/op is:
//
//	go test -run '^$' -bench RunWithDemoData -benchtime 5x ./tdmarketdata
func BenchmarkRunWithDemoData(b *testing.B) {
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		ctr, err := Run(b.Context(), WithDemoData())
		d := time.Since(start)
		b.StopTimer()
		if err != nil {
			_ = testcontainers.TerminateContainer(ctr)
			b.Fatal(err)
		}
		took = append(took, d)
		b.Logf("run %d: %s", len(took), d.Round(time.Millisecond))
		if err := ctr.Terminate(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(took[len(took)/2].Seconds(), "s/start-median")
	b.ReportMetric(took[len(took)-1].Seconds(), "s/start-max")
}
