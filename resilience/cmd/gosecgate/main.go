// Command gosecgate reads gosec JSON reports and fails on every finding
// that gosec-justified.txt does not accept, printing a markdown summary.
// scripts/security.sh runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() {
	cmdmain.Run("gosecgate", run)
}

type justification struct {
	rule, glob, why string
	used            int
}

type finding struct {
	Severity   string `json:"severity"`
	Confidence string `json:"confidence"`
	RuleID     string `json:"rule_id"`
	Details    string `json:"details"`
	File       string `json:"file"`
	Line       string `json:"line"`
}

func run(_ context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gosecgate", flag.ContinueOnError)
	root := fs.String("root", ".", "repository root; finding paths are shown relative to it")
	justified := fs.String("justified", "resilience/gosec-justified.txt", "accepted findings")
	if err := fs.Parse(args); err != nil {
		return err
	}
	js, err := readJustifications(*justified)
	if err != nil {
		return err
	}
	absRoot, _ := filepath.Abs(*root)
	var open, accepted []string
	total := 0
	for _, report := range fs.Args() {
		data, err := os.ReadFile(report)
		if err != nil {
			return err
		}
		var r struct {
			Issues       []finding        `json:"Issues"`
			GolangErrors map[string][]any `json:"Golang errors"`
			Stats        map[string]int   `json:"Stats"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", report, err)
		}
		for file, errs := range r.GolangErrors {
			open = append(open, fmt.Sprintf("- gosec could not type-check %s: %v", file, errs))
		}
		for _, f := range r.Issues {
			total++
			rel, err := filepath.Rel(absRoot, f.File)
			if err != nil {
				rel = f.File
			}
			line := fmt.Sprintf("%s %s:%s (%s/%s) %s", f.RuleID, rel, f.Line, f.Severity, f.Confidence, f.Details)
			if j := match(js, f.RuleID, rel); j != nil {
				j.used++
				accepted = append(accepted, "- "+line+" — justified: "+j.why)
			} else {
				open = append(open, "- "+line)
			}
		}
	}
	sort.Strings(open)
	sort.Strings(accepted)
	fmt.Fprintf(stdout, "gosec: %d findings, %d justified in resilience/gosec-justified.txt, %d open.\n\n", total, len(accepted), len(open))
	if len(open) > 0 {
		fmt.Fprintf(stdout, "Open findings (fix, or justify them):\n\n%s\n\n", strings.Join(open, "\n"))
	}
	if len(accepted) > 0 {
		fmt.Fprintf(stdout, "<details><summary>Justified findings</summary>\n\n%s\n\n</details>\n\n", strings.Join(accepted, "\n"))
	}
	var stale []string
	for _, j := range js {
		if j.used == 0 {
			stale = append(stale, fmt.Sprintf("- %s %s (%s)", j.rule, j.glob, j.why))
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(stdout, "Justifications that matched nothing (remove them):\n\n%s\n\n", strings.Join(stale, "\n"))
	}
	if len(open) > 0 {
		return errors.New("open gosec findings")
	}
	return nil
}

func readJustifications(path string) ([]*justification, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*justification
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want RULE PATH-GLOB justification", path, n)
		}
		out = append(out, &justification{rule: fields[0], glob: fields[1], why: strings.Join(fields[2:], " ")})
	}
	return out, sc.Err()
}

func match(js []*justification, rule, file string) *justification {
	for _, j := range js {
		if j.rule != rule {
			continue
		}
		if ok, _ := filepath.Match(j.glob, file); ok {
			return j
		}
		// "*/x/*" also matches deeper paths under any module.
		if strings.HasPrefix(j.glob, "*/") && strings.HasSuffix(j.glob, "/*") && strings.Contains(file, "/"+strings.Trim(j.glob, "*/")+"/") {
			return j
		}
	}
	return nil
}
