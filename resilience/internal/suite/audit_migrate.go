package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// AuditConcurrentMigrate is issue 12, item 6: marketdata-svc migrate took no
// lock, so two runs on a fresh database failed in 2 of 15 rounds. Every
// subcommand that migrates is the class; each round starts three `migrate`
// and two `keys create` of the real binary at once on a fresh database,
// under the suite's statement timeout.
func AuditConcurrentMigrate(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Concurrent migrations on a fresh database (marketdata-svc)")
	const rounds = 5
	commands := [][]string{{"migrate"}, {"migrate"}, {"migrate"}, {"keys", "create", "--account", "migrate-a"}, {"keys", "create", "--account", "migrate-b"}}
	okRounds, failures := 0, []string{}
	var slowest time.Duration
	for round := range rounds {
		db := fmt.Sprintf("faults_migrate_%d", round)
		if err := e.Stack.RecreateDatabase(ctx, db); err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
		env := e.marketEnvOn(db)
		var wg sync.WaitGroup
		errs := make([]string, len(commands))
		start := time.Now()
		for i, args := range commands {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(cctx, e.Market.Bin, args...)
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					errs[i] = fmt.Sprintf("%s: %v: %s", strings.Join(args[:1], " "), err, lastLine(stderr.String()))
				}
			})
		}
		wg.Wait()
		s.Sent += len(commands)
		slowest = max(slowest, time.Since(start))
		bad := 0
		for _, msg := range errs {
			if msg != "" {
				bad++
				failures = append(failures, fmt.Sprintf("round %d: %s", round+1, msg))
			}
		}
		if bad == 0 {
			okRounds++
		}
		s.Failed += bad
		_ = e.Stack.RecreateDatabase(ctx, db)
	}
	s.Check("every concurrent run succeeds", okRounds == rounds, "%d of %d rounds of 5 concurrent runs succeeded; slowest round %.1f s; %s",
		okRounds, rounds, slowest.Seconds(), strings.Join(failures, "; "))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return truncate(lines[len(lines)-1], 200)
}

// marketEnvOn is the environment of a marketdata-svc subcommand run by hand
// against database db of the suite's stack.
func (e *Env) marketEnvOn(db string) []string {
	env := os.Environ()
	for k, v := range e.Market.Env {
		env = append(env, k+"="+v)
	}
	return append(env, "MARKETDATA_DATABASE_URL="+e.Stack.DatabaseURL(db))
}
