package suite

import (
	"context"
	"fmt"
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
		market := e.onDatabase(e.Market, db)
		var wg sync.WaitGroup
		errs := make([]error, len(commands))
		start := time.Now()
		for i, args := range commands {
			wg.Go(func() { _, errs[i] = market.CLI(ctx, args...) })
		}
		wg.Wait()
		s.Sent += len(commands)
		slowest = max(slowest, time.Since(start))
		bad := 0
		for _, err := range errs {
			if err != nil {
				bad++
				failures = append(failures, fmt.Sprintf("round %d: %v", round+1, err))
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
