// Command fuzzrun runs one fuzz target and fails only on a real finding.
//
// Go 1.26's fuzz coordinator can end a run with a bare "context deadline
// exceeded" when a duration-based -fuzztime expires while a worker is busy
// (golang/go#75804, fixed in Go 1.27). That says nothing about the code under
// test, yet go test exits non-zero. fuzzrun runs
//
//	go test -run '^$' -fuzz '^Target$' -fuzztime T [-parallel P] PKG
//
// in the current module, watches the target's testdata/fuzz directory, and
// classifies the run (see Classify): a reproducer written, a panic or any
// other failure message fails; a bare deadline with no input written is
// reported and passes. `make test` runs every target by execution count
// (-fuzztime Nx), which has no deadline to race; `make fuzz FUZZTIME=5m`
// uses a duration and relies on the classification.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() {
	cmdmain.Run("fuzzrun", run)
}

func run(ctx context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	flags := flag.NewFlagSet("fuzzrun", flag.ContinueOnError)
	target := flags.String("target", "", "fuzz target name (FuzzX)")
	pkg := flags.String("pkg", "", "package holding the target, as go test takes it")
	fuzztime := flags.String("fuzztime", "20000x", "go test -fuzztime: an execution count (Nx) or a duration")
	parallel := flags.Int("parallel", 0, "go test -parallel (fuzz workers); 0 keeps go's default")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *target == "" || *pkg == "" {
		return errors.New("usage: fuzzrun -target FuzzX -pkg ./path [-fuzztime Nx|duration]")
	}
	dir, err := packageDir(ctx, *pkg)
	if err != nil {
		return err
	}
	corpus := filepath.Join(dir, "testdata", "fuzz", *target)
	before, err := listFiles(corpus, dir)
	if err != nil {
		return err
	}

	goArgs := []string{"test", "-run", "^$", "-fuzz", "^" + *target + "$", "-fuzztime", *fuzztime}
	if *parallel > 0 {
		goArgs = append(goArgs, "-parallel", fmt.Sprint(*parallel))
	}
	goArgs = append(goArgs, *pkg)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", goArgs...)
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return fmt.Errorf("run go test: %w", runErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}

	after, err := listFiles(corpus, dir)
	if err != nil {
		return err
	}
	var added []string
	for f := range after {
		if !before[f] {
			added = append(added, f)
		}
	}
	res := Classify(runErr == nil, out.String(), added)
	switch res.Outcome {
	case Clean:
		fmt.Fprintf(stdout, "%s: %s (%s)\n", *target, res.Outcome, lastLine(out.String()))
		return nil
	case DeadlineFlake:
		fmt.Fprintf(stdout, "%s: %s\n", *target, res.Outcome)
		return nil
	}
	stdout.Write(out.Bytes())
	for _, r := range res.Reproducers {
		fmt.Fprintf(stdout, "reproducer: %s (replay: go test -run '%s/%s' %s)\n", filepath.Join(dir, r), *target, filepath.Base(r), *pkg)
	}
	return fmt.Errorf("%s: %s: %s", *target, res.Outcome, res.Reason)
}

// packageDir asks go list where pkg lives, so the corpus directory is found
// whatever form pkg was given in.
func packageDir(ctx context.Context, pkg string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w", pkg, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// listFiles returns the files under dir, relative to base, as go test names
// a written input; a missing dir is empty.
func listFiles(dir, base string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(base, path)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list corpus: %w", err)
	}
	return files, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
