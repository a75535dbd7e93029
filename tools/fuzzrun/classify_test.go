package main

import (
	"slices"
	"testing"
)

// The outputs below are go test -fuzz output as Go 1.26 prints it; the
// deadline one is a real CI failure, verbatim.
const (
	cleanOut = `fuzz: elapsed: 0s, gathering baseline coverage: 0/90 completed
fuzz: elapsed: 0s, gathering baseline coverage: 90/90 completed, now fuzzing with 2 workers
fuzz: elapsed: 2s, execs: 20000 (9637/sec), new interesting: 3 (total: 93)
PASS
ok  	github.com/tickerdesk/tickerdesk/notes-svc/internal/notes	2.114s
`
	deadlineOut = `fuzz: elapsed: 0s, gathering baseline coverage: 0/73 completed
fuzz: elapsed: 0s, gathering baseline coverage: 73/73 completed, now fuzzing with 2 workers
fuzz: elapsed: 3s, execs: 28924 (9637/sec), new interesting: 17 (total: 90)
fuzz: elapsed: 6s, execs: 28924 (0/sec), new interesting: 17 (total: 90)
--- FAIL: FuzzNormalizeTag (9.04s)
    context deadline exceeded
FAIL
exit status 1
FAIL	github.com/tickerdesk/tickerdesk/notes-svc/internal/notes	9.058s
`
	reproducerOut = `fuzz: elapsed: 0s, gathering baseline coverage: 0/2 completed
fuzz: elapsed: 0s, gathering baseline coverage: 2/2 completed, now fuzzing with 2 workers
fuzz: minimizing 41-byte failing input file
fuzz: elapsed: 0s, minimizing
--- FAIL: FuzzParseKey (0.21s)
    --- FAIL: FuzzParseKey (0.00s)
        key_test.go:97: round trip: got "a", want "b"

    Failing input written to testdata/fuzz/FuzzParseKey/5f1c3a9e0d2b7c11
    To re-run:
    go test -run=FuzzParseKey/5f1c3a9e0d2b7c11
FAIL
exit status 1
FAIL	github.com/tickerdesk/tickerdesk/pkg/auth	0.236s
`
	panicOut = `fuzz: elapsed: 0s, gathering baseline coverage: 0/5 completed
--- FAIL: FuzzPriceCSV (0.02s)
    --- FAIL: FuzzPriceCSV (0.00s)
        testing.go:1591: panic: runtime error: index out of range [3] with length 3
            goroutine 7 [running]:
            runtime/debug.Stack()
FAIL
exit status 1
FAIL	github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer	0.031s
`
	checkOut = `fuzz: elapsed: 0s, gathering baseline coverage: 0/12 completed
failure while testing seed corpus entry: FuzzParse/seed#3
fuzz: elapsed: 0s, gathering baseline coverage: 3/12 completed
--- FAIL: FuzzParse (0.01s)
    --- FAIL: FuzzParse (0.00s)
        pagination_test.go:120: limit 0 accepted
FAIL
exit status 1
FAIL	github.com/tickerdesk/tickerdesk/pkg/pagination	0.020s
`
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name            string
		exitOK          bool
		output          string
		newFiles        []string
		want            Outcome
		wantReproducers []string
	}{
		{name: "clean pass", exitOK: true, output: cleanOut, want: Clean},
		{name: "bare deadline", output: deadlineOut, want: DeadlineFlake},
		{name: "reproducer written", output: reproducerOut, want: Finding,
			wantReproducers: []string{"testdata/fuzz/FuzzParseKey/5f1c3a9e0d2b7c11"}},
		{name: "reproducer found only on disk", output: deadlineOut, newFiles: []string{"testdata/fuzz/FuzzNormalizeTag/77aa"},
			want: Finding, wantReproducers: []string{"testdata/fuzz/FuzzNormalizeTag/77aa"}},
		{name: "reproducer named and on disk counts once", output: reproducerOut,
			newFiles: []string{"testdata/fuzz/FuzzParseKey/5f1c3a9e0d2b7c11"}, want: Finding,
			wantReproducers: []string{"testdata/fuzz/FuzzParseKey/5f1c3a9e0d2b7c11"}},
		{name: "panic", output: panicOut, want: Finding},
		{name: "panic even with exit 0", exitOK: true, output: cleanOut + "panic: send on closed channel\n", want: Finding},
		{name: "failed check", output: checkOut, want: Finding},
		{name: "deadline beside a failed check", output: deadlineOut + "    note_test.go:171: tag not folded\n", want: Finding},
		{name: "two deadlines", output: deadlineOut + "    context deadline exceeded\n", want: Finding},
		{name: "failure with no message", output: "FAIL\nexit status 1\n", want: Finding},
		{name: "build failure", output: "# github.com/x/y\n./y.go:3:1: syntax error\nFAIL\tgithub.com/x/y [build failed]\n", want: Finding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.exitOK, tt.output, tt.newFiles)
			if got.Outcome != tt.want {
				t.Fatalf("Classify = %s (%s), want %s", got.Outcome, got.Reason, tt.want)
			}
			if !slices.Equal(got.Reproducers, tt.wantReproducers) {
				t.Errorf("reproducers = %q, want %q", got.Reproducers, tt.wantReproducers)
			}
		})
	}
}
