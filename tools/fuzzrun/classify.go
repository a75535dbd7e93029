package main

import (
	"regexp"
	"slices"
	"strings"
)

// Outcome is what one fuzz run amounts to for CI.
type Outcome int

const (
	// Clean is a run that ended without a failure.
	Clean Outcome = iota
	// Finding is a real failure: a reproducer written, a panic, a failed
	// check, or anything else the classifier cannot prove harmless.
	Finding
	// DeadlineFlake is the bare "context deadline exceeded" that Go 1.26's
	// fuzz coordinator reports when a duration-based -fuzztime expires while
	// a worker is busy (golang/go#75804): no input failed, so it is no
	// finding.
	DeadlineFlake
)

// String names the outcome as the run's summary line prints it.
func (o Outcome) String() string {
	switch o {
	case Clean:
		return "clean"
	case Finding:
		return "finding"
	case DeadlineFlake:
		return "deadline flake (golang/go#75804), no finding"
	}
	return "unknown"
}

// Result is the classification of one fuzz run with the evidence for it.
type Result struct {
	Outcome Outcome
	// Reason says why, in one line.
	Reason string
	// Reproducers are the paths of failing inputs the run wrote.
	Reproducers []string
}

var (
	writtenRE = regexp.MustCompile(`Failing input written to (\S+)`)
	// noise matches the lines every fuzz run prints, failed or not: they
	// carry no finding. Anything else in a failed run is evidence of one.
	noise = []*regexp.Regexp{
		regexp.MustCompile(`^fuzz: elapsed: `),
		regexp.MustCompile(`^fuzz: minimizing`),
		regexp.MustCompile(`^warning: starting with empty corpus`),
		regexp.MustCompile(`^=== (RUN|PAUSE|CONT|NAME)\b`),
		regexp.MustCompile(`^--- FAIL: Fuzz\w+ \([0-9.]+s\)$`),
		regexp.MustCompile(`^(FAIL|PASS)$`),
		regexp.MustCompile(`^exit status \d+$`),
		regexp.MustCompile(`^(FAIL|ok)\s+\S+\s+[0-9.]+s$`),
	}
	deadlineLine = "context deadline exceeded"
)

// Classify decides what a fuzz run's exit and output mean. exitOK is whether
// go test exited 0; newFiles are the files that appeared under the target's
// testdata/fuzz directory during the run, relative to the package directory
// as go test names them (testdata/fuzz/FuzzX/<hash>).
//
// It errs towards Finding: a run is a DeadlineFlake only when it failed, wrote
// no input, and its output holds nothing but the usual progress lines and
// exactly one bare "context deadline exceeded". Any panic, reproducer or
// other message keeps it a Finding, so a real failure is never hidden behind
// the flake.
func Classify(exitOK bool, output string, newFiles []string) Result {
	var reproducers []string
	for _, m := range writtenRE.FindAllStringSubmatch(output, -1) {
		reproducers = append(reproducers, m[1])
	}
	for _, f := range newFiles {
		if !slices.Contains(reproducers, f) {
			reproducers = append(reproducers, f)
		}
	}
	if len(reproducers) > 0 {
		return Result{Outcome: Finding, Reason: "failing input written", Reproducers: reproducers}
	}
	if strings.Contains(output, "panic:") || strings.Contains(output, "fatal error:") {
		return Result{Outcome: Finding, Reason: "panic"}
	}
	if exitOK {
		return Result{Outcome: Clean, Reason: "passed"}
	}
	deadlines, other := 0, ""
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || isNoise(line) {
			continue
		}
		if line == deadlineLine {
			deadlines++
			continue
		}
		if other == "" {
			other = line
		}
	}
	switch {
	case other != "":
		return Result{Outcome: Finding, Reason: "failed: " + other}
	case deadlines == 1:
		return Result{Outcome: DeadlineFlake, Reason: "bare " + deadlineLine + ", no input written"}
	default:
		return Result{Outcome: Finding, Reason: "failed with no explanation"}
	}
}

func isNoise(line string) bool {
	for _, re := range noise {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}
