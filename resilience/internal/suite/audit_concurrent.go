package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
)

// AuditConcurrentImports reproduces an outside audit's finding: import A adds a split while
// import B adds older bars of the same symbol; each recomputed the factors
// without the other's rows, so B's bars kept factor 1 for good (adj_close
// 100 on 2009-12-31 where 50 is right). Each round runs both imports of the
// real binary at once on a fresh database while a psql session holds the
// data version row, so both do all their work before either commits, the
// worst interleaving; then it reads the adjusted closes.
func AuditConcurrentImports(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Concurrent imports of one symbol (marketdata-svc)")
	dir, err := os.MkdirTemp("", "faults-imports")
	if err != nil {
		s.Check("setup", false, "%v", err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"base.csv":  "Date,Open,High,Low,Close,Volume\n2010-01-04,50,50,50,50,100\n2010-01-05,52,52,52,52,100\n",
		"older.csv": "Date,Open,High,Low,Close,Volume\n2009-12-31,100,100,100,100,100\n",
		"split.csv": "symbol,date,factor\nTDAUD,2010-01-04,2\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
	}
	const rounds = 5
	right, figures := 0, []string{}
	for round := range rounds {
		db := fmt.Sprintf("faults_imports_%d", round)
		market, ok := e.freshMarket(ctx, s, db)
		if !ok {
			return
		}
		run := func(args ...string) error {
			_, err := market.CLI(ctx, args...)
			return err
		}
		if err := run("import", "--symbol", "TDAUD", filepath.Join(dir, "base.csv")); err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
		hold, err := e.Stack.HoldPSQL(ctx, db, "BEGIN; LOCK TABLE data_version IN SHARE MODE; SELECT pg_sleep(1.5); COMMIT;")
		if err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
		// The lock is held before the imports start.
		if err := e.Stack.WaitLock(ctx, db, "data_version", "ShareLock"); err != nil {
			s.Check("setup", false, "%v", err)
			return
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = run("import", filepath.Join(dir, "split.csv")) })
		wg.Go(func() { errs[1] = run("import", "--symbol", "TDAUD", filepath.Join(dir, "older.csv")) })
		wg.Wait()
		_ = hold.Wait()
		s.Sent += 2
		if errs[0] != nil || errs[1] != nil {
			s.Failed++
			figures = append(figures, fmt.Sprintf("round %d: %v %v", round+1, errs[0], errs[1]))
			continue
		}
		out, err := e.Stack.PSQL(ctx, db, "SELECT string_agg(to_char(date, 'YYYY-MM-DD') || '=' || round((close * price_factor)::numeric, 2), ' ' ORDER BY date) FROM eod_bars WHERE symbol = 'TDAUD'")
		if err != nil {
			s.Failed++
			figures = append(figures, fmt.Sprintf("round %d: %v", round+1, err))
			continue
		}
		if out == "2009-12-31=50.00 2010-01-04=50.00 2010-01-05=52.00" {
			right++
		} else {
			s.Failed++
		}
		if round == 0 || out != "2009-12-31=50.00 2010-01-04=50.00 2010-01-05=52.00" {
			figures = append(figures, fmt.Sprintf("round %d adj_close: %s", round+1, out))
		}
		_ = e.Stack.RecreateDatabase(ctx, db)
	}
	s.Check("factors after concurrent imports equal the sequential ones", right == rounds,
		"%d of %d rounds right (split 2:1 on 2010-01-04: adj_close 50 on 2009-12-31 and 2010-01-04); %s", right, rounds, strings.Join(figures, "; "))
}

// AuditConcurrentMigrate reproduces an outside audit's finding: marketdata-svc migrate took no
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
		market, ok := e.freshMarket(ctx, s, db)
		if !ok {
			return
		}
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

// freshMarket empties database db for one round and returns marketdata-svc
// pointed at it; when db cannot be made, it fails the scenario's setup.
func (e *Env) freshMarket(ctx context.Context, s *report.Scenario, db string) (*harness.Service, bool) {
	if err := e.Stack.RecreateDatabase(ctx, db); err != nil {
		s.Check("setup", false, "%v", err)
		return nil, false
	}
	return e.onDatabase(e.Market, db), true
}
